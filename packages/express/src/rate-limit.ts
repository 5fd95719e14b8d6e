import type { Decision, MaybePromise } from '@ratekit/core';
import type { NextFunction, Request, Response } from 'express';
import { counterMiddleware, refuseOverLimit } from './compat/counter.js';
import { isThenable } from './maybe.js';
import { type Config, resolveOptions } from './compat/options.js';
import { rateKitMiddleware } from './ratekit.js';
import type { ClientRateLimitInfo, RateLimitOptions, RateLimitRequestHandler } from './types.js';

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
 * `onStoreError`, `storeTimeoutMs`, `onError`, or a ratekit store): the core
 * limiter decides with any algorithm, several limits all-or-nothing and costs;
 * a refusal charges nothing.
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
 * @throws {RateKitOptionError} in ratekit mode, when an option has the wrong type or ratekit options conflict (code `ERR_RATEKIT_INVALID_OPTION`), here, not per request
 * @throws {TypeError} for an invalid `store` or `logger`, with express-rate-limit's messages
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
  const config = resolveOptions(options);
  const handle = config.mode === 'ratekit' ? rateKitMiddleware(config) : counterMiddleware(config, refuseOverLimit(config));
  return withInstanceMethods(handle, config);
}

/**
 * Adds express-rate-limit's instance methods to a middleware: `resetKey` and
 * `getKey` (the store's, bound; `getKey` throws synchronously when the store
 * has no `get`), and `limiter` (ratekit mode).
 */
export function withInstanceMethods(handle: (req: Request, res: Response, next: NextFunction) => Promise<void>, config: Config): RateLimitRequestHandler {
  if (config.mode === 'ratekit') {
    const { limiter } = config;
    return Object.assign(handle, {
      limiter,
      resetKey: (key: string) => limiter.reset(key),
      getKey: (key: string) => hitsOf(limiter.peek(key)),
    }) as RateLimitRequestHandler;
  }
  const { store } = config;
  const getKey =
    typeof store.get === 'function'
      ? store.get.bind(store)
      : () => {
          throw new Error('The current store does not support the get/getKey method');
        };
  return Object.assign(handle, { limiter: undefined, resetKey: store.resetKey.bind(store), getKey }) as RateLimitRequestHandler;
}

/** A peeked decision as express-rate-limit's `{ totalHits, resetTime }`, `undefined` for a key with nothing counted. */
function hitsOf(decision: MaybePromise<Decision>): MaybePromise<ClientRateLimitInfo | undefined> {
  const convert = (d: Decision): ClientRateLimitInfo | undefined => {
    const used = Math.max(0, Math.ceil(d.limit - d.remaining));
    return used === 0 && d.resetMs === 0 ? undefined : { totalHits: used, resetTime: new Date(d.nowMs + d.resetMs) };
  };
  return isThenable(decision) ? decision.then(convert) : convert(decision);
}
