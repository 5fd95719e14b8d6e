// A CommonJS app: `require('@ratekit/express')` is rateLimit itself, carrying the named exports.
import express = require('express');
import rateLimit = require('@ratekit/express');

const app = express();
app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }));
app.use(rateLimit.rateLimit({ limit: 10 }));
app.use(rateLimit.default({ limit: 10 }));
app.use(rateLimit.slowDown({ windowMs: 60_000, delayAfter: 5, delayMs: (hits: number) => hits * 100 }));

// express-rate-limit's store contract and names.
const store: rateLimit.Store = new rateLimit.MemoryStore();
declare const erlValidations: import('express-rate-limit').Validations;
app.use(rateLimit({ store: new rateLimit.MemoryStore(erlValidations) }));
app.use(rateLimit({ store, keyGenerator: (req) => rateLimit.ipKeyGenerator(req.ip ?? '', 56) }));
const options: Partial<rateLimit.Options> = { limit: 5 };
app.use(rateLimit(options));
export type Checks = rateLimit.Validations;

// @ts-expect-error `limit` is a number or a function, not a string
rateLimit({ limit: 'ten' });
// @ts-expect-error not an option of express-rate-limit or ratekit
rateLimit({ maxRequests: 5 });
