/**
 * @ratekit/hono: rate limiting for Hono 4 on every runtime (Node, Bun, Deno, Cloudflare Workers):
 * `rateLimit(options)` on @ratekit/core (ratekit mode), or `rateLimiter(config)`, `webSocketLimiter`,
 * `MemoryStore`, `RedisStore`, a drop-in for hono-rate-limiter 0.5 (also at `@ratekit/hono/compat`).
 *
 * @module
 */

// ratekit mode.
export { rateLimit } from './rate-limit.js';
export type { RateLimitMiddleware } from './rate-limit.js';
export type { ConnInfoLike, GetConnInfo, RateLimitOptions } from './options.js';
export type { KeyResult, TrustProxy } from '@ratekit/core';

// The hono-rate-limiter 0.5 drop-in.
export { MemoryStore, rateLimiter, RedisStore, webSocketLimiter } from './compat/index.js';
export type { ClientRateLimitInfo, ConfigProps, ConfigType, HonoConfigProps, HonoConfigType, Options, RateLimitInfo } from './compat/index.js';
export type { RateLimitStoreAccess, RedisClient, Store, StoreTimeoutOption, WSConfigProps, WSConfigType } from './compat/index.js';

// Re-exported from @ratekit/core so custom keys and stores need one import.
export { ipKeyGenerator, memoryStore, RateKitError, RateKitOptionError } from '@ratekit/core';
export type { AlgorithmName, Decision, LimitOptions, RateLimitStore } from '@ratekit/core';
