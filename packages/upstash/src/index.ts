/**
 * @ratekit/upstash: a drop-in for `@upstash/ratelimit` 2.2.0. Change the import and nothing else:
 * the same `Ratelimit` class, algorithms, options, responses and Redis keys, over an
 * `@upstash/redis` client (HTTP) or an ioredis / node-redis client (TCP), on Upstash or on
 * open-source Redis 7.
 *
 * @module
 */
export { Ratelimit, DEFAULT_PREFIX } from './ratelimit.js';
export type { RatelimitConfig } from './ratelimit.js';
export { MultiRegionRatelimit } from './multi-region.js';
export type { MultiRegionContext, MultiRegionRatelimitConfig } from './multi-region.js';
export { rateLimitHeaders } from './headers.js';
export type { RateLimitHeadersOptions } from './headers.js';
export { ms } from './duration.js';
export type { Duration, Unit } from './duration.js';
export type { Algorithm, LimitOptions, RatelimitResponse, RatelimitResponseType, RegionContext, RemainingTokens } from './types.js';
export type { EphemeralCache } from './cache.js';
export { SCRIPTS } from './scripts.js';
export { Analytics } from './analytics.js';
export type { Aggregate, AnalyticsConfig, Event, EventSuccess, Geo } from './analytics.js';
export * as IpDenyList from './ip-deny-list.js';
export type { LuaScript } from './scripts.js';
