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
 * Builds Express middleware (Express 4 and 5) that rate-limits requests: a drop-in for
 * express-rate-limit v8's `rateLimit`, with ratekit's algorithms one option away.
 *
 * **express-rate-limit mode** (only express-rate-limit options, or one of its stores): its
 * defaults (5 requests per 60 s window per client IP, legacy headers on), steps, `req.rateLimit`,
 * headers, checks (`ERR_ERL_*`, logged once; values of the wrong type used as given) and store
 * contract. Every request counts, refused ones included.
 *
 * **ratekit mode** (any of `algorithm`, `limits`, `cost`, `prefix`, `onStoreError`,
 * `storeTimeoutMs`, `onError`, `refusalCache`, or a ratekit store): @ratekit/core's gate, with its
 * options (`GateOptions`) and Express's `(req, res)` functions, `handler(req, res, next, options)`,
 * `req.ip`, `requestPropertyName` and the refund options. Any algorithm, several limits
 * all-or-nothing, costs; a refusal charges nothing.
 *
 * The middleware returns a promise, as express-rate-limit's: it settles once the request is passed
 * on or answered (and, when the response has already ended, once the skip options have taken the
 * hit back) and never rejects (errors go to `next(err)`). It carries `resetKey(key)`,
 * `getKey(key)` and, in ratekit mode, `limiter`.
 *
 * @throws {RateKitOptionError} in ratekit mode, naming the first bad option (code `ERR_RATEKIT_INVALID_OPTION`), here, not per request
 * @throws {TypeError} in express-rate-limit mode, for an invalid `store` or `logger`, with express-rate-limit's messages
 * @see docs/migrating/express-rate-limit.md for every difference from express-rate-limit
 * @example
 * ```ts
 * app.use(rateLimit({ windowMs: 15 * 60_000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }));
 * app.post('/login', rateLimit({ algorithm: 'sliding-window', windowMs: 60_000, limit: 5 }), login);
 * ```
 */
export function rateLimit(options: RateLimitOptions = {}): RateLimitRequestHandler {
  return selectsRateKit(options) ? rateKitMiddleware(options) : expressRateLimit(options);
}
