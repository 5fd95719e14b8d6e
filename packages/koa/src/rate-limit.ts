import type { DefaultContext, DefaultState, ParameterizedContext } from 'koa';
import { compatRatelimit, type KoaRatelimitMiddleware } from './compat/middleware.js';
import { isRateKitMode, type RateKitOptionName } from './mode.js';
import type { RateLimitOptions } from './options.js';
import { type RateLimitMiddleware, rateKitRatelimit } from './ratekit.js';

export type { RateLimitMiddleware, RateLimitState } from './ratekit.js';

/**
 * Options that choose ratekit mode: {@link RateLimitOptions} with at least
 * one ratekit-only option (`algorithm`, `limits`, `cost`,
 * `standardHeaders`, `legacyHeaders`, `store`, `onStoreError`, `onError`,
 * `now`).
 */
export type RateKitModeOptions<TContext> = RateLimitOptions<TContext> & { [K in RateKitOptionName]-?: Required<Pick<RateLimitOptions<TContext>, K>> }[RateKitOptionName];

/**
 * Koa rate-limiting middleware, in one of two modes chosen by its options.
 *
 * **koa-ratelimit mode** (only koa-ratelimit 6's options: `driver`, `db`,
 * `duration`, `max`, `id`, `namespace`, `headers`, `disableHeader`,
 * `whitelist`, `blacklist`, `errorMessage`, `status`, `throw`,
 * `onLimited`; plus `storeTimeoutMs` and `maxKeys`): behaves as
 * koa-ratelimit 6, same headers, bytes, order and state: the memory
 * driver's state lives in the `db` Map (bounded by `maxKeys`, default
 * 100 000), the Redis driver's in koa-ratelimit's own sorted sets
 * (`<namespace>:<id>`) on the ioredis client `db`, so old and new instances
 * share counts during a rolling deploy. Without `driver`, a Redis client as
 * `db` selects `'redis'`, anything else `'memory'`. The default refusal is
 * 429 `Rate limit exceeded, retry in <ms long>.` (see src/compat/).
 *
 * **ratekit mode** (any of ratekit's options: `algorithm`, `limits`,
 * `cost`, `standardHeaders`, `legacyHeaders`, `store`, `onStoreError`,
 * `onError`, `now`): runs on @ratekit/core. Per request, in order:
 * `blacklist` (true → `ctx.throw(403, 'Forbidden')`), `whitelist` (true →
 * pass, uncounted, no headers), `id` (`false` → the same), then one
 * decision of the limiter, put on `ctx.state.rateLimit`, with headers from
 * @ratekit/core's header module. An admitted request goes on to `next()`
 * (held first for the `delay` algorithm's `delayMs`); a refused one is
 * answered with `status` (429) and `errorMessage` (default
 * @ratekit/core's `DEFAULT_REFUSAL_MESSAGE`), or thrown in `throw` mode.
 * `X-RateLimit-Reset` is whole epoch seconds rounded up; `Retry-After` is
 * rounded up and at least 1.
 *
 * @throws {RateKitOptionError} when built with a bad option (code `ERR_RATEKIT_INVALID_OPTION`).
 * Per request, the middleware rejects with a `RateKitError` of code
 * `ERR_RATEKIT_STORE` when the store (or Redis) fails or does not answer
 * within `storeTimeoutMs` (default 1 s), and in ratekit mode
 * `ERR_RATEKIT_KEY` when `id` throws or returns no usable key; Koa
 * answers them with 500.
 * @see https://github.com/koajs/ratelimit (the options and behaviour koa-ratelimit mode follows)
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { Redis } from 'ioredis';
 * import { ratelimit } from '@ratekit/koa'; // was: import ratelimit from 'koa-ratelimit'
 *
 * const app = new Koa();
 * // koa-ratelimit mode: the same keys and counts as koa-ratelimit 6.
 * app.use(ratelimit({ driver: 'redis', db: new Redis(), duration: 60_000, max: 100 }));
 * // ratekit mode: a token bucket on @ratekit/core.
 * app.use(ratelimit({ algorithm: 'token-bucket', duration: 60_000, max: 100, standardHeaders: 'draft-8' }));
 * ```
 */
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(options: RateKitModeOptions<ParameterizedContext<StateT, ContextT>>): RateLimitMiddleware<StateT, ContextT>;
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(options?: RateLimitOptions<ParameterizedContext<StateT, ContextT>>): KoaRatelimitMiddleware<StateT, ContextT>;
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(
  options?: RateLimitOptions<ParameterizedContext<StateT, ContextT>>,
): RateLimitMiddleware<StateT, ContextT> | KoaRatelimitMiddleware<StateT, ContextT> {
  if (!isRateKitMode(options)) return compatRatelimit<StateT, ContextT>((options ?? {}) as Record<string, unknown>);
  return rateKitRatelimit<StateT, ContextT>(options);
}
