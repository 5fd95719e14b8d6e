// A CommonJS file written with ES import syntax (compiled to require()): default, named and namespace imports.
import Koa from 'koa';
import ratelimit, { rateLimit, type MiddlewareOptions } from '@ratekit/koa';
import * as everything from '@ratekit/koa';

const app = new Koa();
const options: MiddlewareOptions = { driver: 'memory', db: new Map(), max: 10 };
app.use(ratelimit(options));
app.use(rateLimit({ algorithm: 'gcra', duration: 1_000, max: 10 }));
app.use(everything.ratelimit(options));
app.use(everything.default(options));

// @ts-expect-error `max` is a number (or, in ratekit mode, a function of the context)
ratelimit({ driver: 'memory', db: new Map(), max: '10' });
