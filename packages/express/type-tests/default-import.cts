// A CommonJS file written with ES import syntax (compiled to require()): default, named and namespace imports.
import express from 'express';
import rateLimit, { MemoryStore, rateLimit as named, slowDown } from '@ratekit/express';
import * as everything from '@ratekit/express';

const app = express();
app.use(rateLimit({ limit: 5 }));
app.use(named({ limit: 5, store: new MemoryStore() }));
app.use(slowDown({ delayAfter: 1 }));
app.use(everything.rateLimit({ limit: 5 }));
app.use(everything.default({ limit: 5 }));

// @ts-expect-error `delayAfter` is a number or a function
slowDown({ delayAfter: 'one' });
