import type { DefaultContext, DefaultState, ParameterizedContext } from 'koa';
import { compatRatelimit, type KoaRatelimitMiddleware } from './compat/middleware.js';
import { isRateKitMode, type RateKitOptionName } from './mode.js';
import type { RateLimitOptions } from './options.js';
import { type RateLimitMiddleware, rateKitRatelimit } from './ratekit.js';

export type { RateLimitMiddleware, RateLimitState } from './ratekit.js';

/** Options that choose ratekit mode: {@link RateLimitOptions} with at least one ratekit-only option (see {@link ratelimit}). */
export type RateKitModeOptions<TContext> = RateLimitOptions<TContext> & { [K in RateKitOptionName]-?: Required<Pick<RateLimitOptions<TContext>, K>> }[RateKitOptionName];

/**
 * Koa rate-limiting middleware, in one of two modes chosen by its options.
 *
 * **koa-ratelimit mode** (only koa-ratelimit 6's options, plus `storeTimeoutMs` and `maxKeys`):
 * behaves as koa-ratelimit 6, same headers, bytes, order and state (the memory driver's in the
 * `db` Map, bounded by `maxKeys`; the Redis driver's in koa-ratelimit's own sorted sets, so old and
 * new instances share counts during a rolling deploy). See src/compat/.
 *
 * **ratekit mode** (any of ratekit's options: `algorithm`, `limits`, `cost`, `standardHeaders`,
 * `legacyHeaders`, `store`, `onStoreError`, `onError`, `now`, `refusalCache`): runs on @ratekit/core's gate. Per request:
 * `blacklist` (true → `ctx.throw(403, 'Forbidden')`), `whitelist` or an `id` of `false` (pass,
 * uncounted, no headers), then one decision, put on `ctx.state.rateLimit`, with its headers. An
 * admitted request goes on to `next()` (held first for the `delay` algorithm's `delayMs`); a
 * refused one is answered with `status` (429) and `errorMessage` (default core's
 * `DEFAULT_REFUSAL_MESSAGE`), or thrown in `throw` mode.
 *
 * @throws {RateKitOptionError} when built with a bad option (code `ERR_RATEKIT_INVALID_OPTION`).
 * Per request, it rejects with a `RateKitError`, which Koa answers with 500: `ERR_RATEKIT_STORE`
 * when the store (or Redis) fails or does not answer within `storeTimeoutMs` (default 1 s), and
 * in ratekit mode `ERR_RATEKIT_KEY` when `id` throws or returns no usable key.
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
