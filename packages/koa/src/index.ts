/**
 * @ratekit/koa: Koa 2 and 3 rate-limiting middleware. Given koa-ratelimit 6's options it behaves
 * as koa-ratelimit 6 (change the import and nothing else); given any of ratekit's options it runs
 * on @ratekit/core. As koa-ratelimit's, the CommonJS export is the middleware factory itself,
 * carrying the named exports: `const ratelimit = require('@ratekit/koa')`.
 *
 * @module
 */

// The middleware. `rateLimit` is the name every ratekit adapter uses; `ratelimit` is koa-ratelimit's.
export { ratelimit, ratelimit as rateLimit, ratelimit as default } from './rate-limit.js';
export type { RateKitModeOptions, RateLimitMiddleware, RateLimitState } from './rate-limit.js';
export type { HeaderNameOptions, KeyResult, MiddlewareOptions, RateLimitOptions } from './options.js';
export type { KoaRatelimitMiddleware, KoaRatelimitState } from './compat/middleware.js';
export type { MemoryEntry } from './compat/memory-driver.js';
export type { IoRedisLike } from './compat/redis-driver.js';

// Re-exported so apps need one import for custom keys and decisions.
export { ipKeyGenerator } from '@ratekit/core';
export type { Decision } from '@ratekit/core';
