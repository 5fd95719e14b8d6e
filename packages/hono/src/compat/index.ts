/**
 * @ratekit/hono/compat: the hono-rate-limiter 0.5.4 drop-in alone, with its
 * header writers (hono-rate-limiter's internal `setDraft6Headers`,
 * `setDraft7Headers` and `setRetryAfterHeader`, for custom handlers).
 * Everything else here is also exported from `@ratekit/hono`.
 *
 * @module
 */
export { rateLimiter } from './rate-limiter.js';
export type { StoreTimeoutOption } from './rate-limiter.js';
export { webSocketLimiter } from './websocket.js';
export { MemoryStore } from './memory-store.js';
export { RedisStore } from './redis-store.js';
export type { Options, RedisClient, RedisReply } from './redis-store.js';
export { setDraft6Headers, setDraft7Headers, setRetryAfterHeader } from './headers.js';
export type {
  ClientRateLimitInfo,
  CloudflareConfigProps,
  CloudflareConfigType,
  ConfigProps,
  ConfigType,
  HonoConfigProps,
  HonoConfigType,
  Promisify,
  RateLimitBinding,
  RateLimitExceededEventHandler,
  RateLimitInfo,
  RateLimitStoreAccess,
  Store,
  WSConfigProps,
  WSConfigType,
  WSRateLimitExceededEventHandler,
  WSStatusCode,
} from './types.js';
