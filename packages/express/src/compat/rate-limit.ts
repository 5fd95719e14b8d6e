/**
 * express-rate-limit mode's middleware: express-rate-limit v8's `rateLimit`, counting through an
 * express-rate-limit store, with its instance methods `resetKey` and `getKey` (slowDown's too).
 *
 * @module
 */
import type { NextFunction, Request, Response } from 'express';
import { counterMiddleware, refuseOverLimit } from './counter.js';
import { type CounterConfig, resolveOptions } from './options.js';
import type { RateLimitOptions, RateLimitRequestHandler } from '../types.js';

/** express-rate-limit's `rateLimit(options)`. @throws {TypeError} for an invalid `store` or `logger`, with express-rate-limit's messages */
export function expressRateLimit(options: RateLimitOptions): RateLimitRequestHandler {
  const config = resolveOptions(options);
  return withInstanceMethods(counterMiddleware(config, refuseOverLimit(config)), config);
}

/**
 * Adds express-rate-limit's instance methods to a middleware: `resetKey` and `getKey` (the
 * store's, bound; `getKey` throws synchronously when the store has no `get`), and `limiter: undefined`.
 */
export function withInstanceMethods(handle: (req: Request, res: Response, next: NextFunction) => Promise<void>, config: CounterConfig): RateLimitRequestHandler {
  const { store } = config;
  const getKey =
    typeof store.get === 'function'
      ? store.get.bind(store)
      : () => {
          throw new Error('The current store does not support the get/getKey method');
        };
  return Object.assign(handle, { limiter: undefined, resetKey: store.resetKey.bind(store), getKey }) as RateLimitRequestHandler;
}
