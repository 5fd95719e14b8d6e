/**
 * @ratekit/koa: Koa 2 and 3 rate-limiting middleware on @ratekit/core, with
 * koa-ratelimit 6's options so it can replace it, plus ratekit's algorithms,
 * all-or-nothing multi-limit policies, costs, dynamic limits and the IETF
 * RateLimit header drafts.
 *
 * @module
 */

// The middleware. `rateLimit` is the name every ratekit adapter uses; `ratelimit` is koa-ratelimit's.
export { ratelimit, ratelimit as rateLimit } from './rate-limit.js';
export type { RateLimitMiddleware, RateLimitState } from './rate-limit.js';
export type { KeyResult, RateLimitOptions } from './options.js';

// Re-exported so apps need one import for custom keys and decisions.
export { ipKeyGenerator } from '@ratekit/core';
export type { Decision } from '@ratekit/core';
