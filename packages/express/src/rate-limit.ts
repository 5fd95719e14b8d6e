/**
 * `rateLimit()`: chooses the mode once, when the middleware is built. ratekit mode (ratekit.ts) stands
 * on @ratekit/core's gate; express-rate-limit mode is the imitation in compat/.
 *
 * @module
 */
import { expressRateLimit } from './compat/rate-limit.js';
import { rateKitMiddleware } from './ratekit.js';
import { selectsRateKit } from './ratekit-options.js';
import type { RateLimitOptions, RateLimitRequestHandler } from './types.js';

/**
 * Builds Express middleware (Express 4 and 5) that rate-limits requests: a
 * drop-in for express-rate-limit v8's `rateLimit`, with ratekit's algorithms
 * one option away.
 *
 * **express-rate-limit mode** (only express-rate-limit options, or one of its
 * stores): the same defaults (5 requests per 60 s window per client IP,
 * legacy headers on, standard headers off), the same steps in the same order,
 * the same `req.rateLimit`, headers, validations (`ERR_ERL_*`, logged once)
 * and store contract (rate-limit-redis, rate-limit-memcached, … plug in
 * unchanged). Every request counts, refused ones included; a request is
 * refused when its count exceeds `limit`.
 *
 * **ratekit mode** (any of `algorithm`, `limits`, `cost`, `prefix`,
 * `onStoreError`, `storeTimeoutMs`, `onError`, `refusalCache`, or a ratekit
 * store): @ratekit/core's gate, with its options (`GateOptions`) and Express's
 * `(req, res)` functions, `handler(req, res, next, options)`, `req.ip`,
 * `requestPropertyName` and the refund options. The core limiter decides with
 * any algorithm, several limits all-or-nothing and costs; a refusal charges
 * nothing. Bad options throw when it is built; express-rate-limit's checks do
 * not run.
 *
 * The middleware returns a promise, as express-rate-limit's does: it settles
 * once the request has been passed on or answered and, when the response has
 * already ended, once the skip options have taken the hit back; it never
 * rejects. It carries `resetKey(key)` and `getKey(key)` (the store's, as in
 * express-rate-limit) and, in ratekit mode, `limiter`.
 *
 * In express-rate-limit mode, options of the wrong type are taken as
 * express-rate-limit takes them (its checks log; the value is used as given).
 *
 * @throws {RateKitOptionError} in ratekit mode, naming the first bad option (code `ERR_RATEKIT_INVALID_OPTION`), here, not per request
 * @throws {TypeError} in express-rate-limit mode, for an invalid `store` or `logger`, with express-rate-limit's messages
 * @see docs/migrating/express-rate-limit.md for every difference from express-rate-limit
 * @example
 * ```ts
 * import express from 'express';
 * import rateLimit from '@ratekit/express';
 *
 * const app = express();
 * app.use(rateLimit({ windowMs: 15 * 60_000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }));
 * app.post('/login', rateLimit({ algorithm: 'sliding-window', windowMs: 60_000, limit: 5 }), login);
 * ```
 */
export function rateLimit(options: RateLimitOptions = {}): RateLimitRequestHandler {
  return selectsRateKit(options) ? rateKitMiddleware(options) : expressRateLimit(options);
}
