/**
 * @ratekit/express: Express 4 and 5 rate-limiting middleware on
 * @ratekit/core, and a drop-in replacement for express-rate-limit v8 and
 * express-slow-down: change the import, keep the options, the stores and the
 * responses; then add ratekit's algorithms, several limits per request and
 * costs where you need them.
 *
 * The CommonJS build's export is `rateLimit` itself, carrying every named
 * export (`require('@ratekit/express')(options)` works, as with
 * express-rate-limit).
 *
 * @module
 */

// The middleware.
export { rateLimit, rateLimit as default } from './rate-limit.js';
export { slowDown } from './compat/slow-down.js';

// express-rate-limit's store contract: its MemoryStore, and a ratekit store behind that contract.
export { MemoryStore } from './compat/memory-store.js';
export type { MemoryStoreOptions, MemoryStoreValidations } from './compat/memory-store.js';
export { RateKitStore } from './compat/ratekit-store.js';
export type { RateKitStoreOptions } from './compat/ratekit-store.js';

// express-rate-limit's configuration-check errors (logged, never thrown).
export { ChangeWarning, ValidationError } from './compat/validations.js';
/** express-rate-limit's name for its checks object (the type of its `getValidations()` result). */
export type { UpstreamValidations as Validations } from './compat/validations.js';

export type {
  AugmentedRequest,
  Client,
  ClientRateLimitInfo,
  DelayFn,
  DraftHeadersVersion,
  EnabledValidations,
  IncrementCallback,
  IncrementResponse,
  LegacyStore,
  Logger,
  LoggerFn,
  Options,
  RateLimitedRequest,
  RateLimitExceededEventHandler,
  RateLimitHandler,
  RateLimitInfo,
  RateLimitMessage,
  RateLimitMiddleware,
  RateLimitMode,
  RateLimitOptions,
  RateLimitReachedEventHandler,
  RateLimitRequestHandler,
  ResolvedRateLimitOptions,
  SlowDownInfo,
  SlowDownOptions,
  SlowDownRequestHandler,
  StandardHeadersVersion,
  Store,
  ValidationName,
  ValueDeterminingMiddleware,
  ValueOrPromise,
} from './types.js';

// Re-exported from @ratekit/core so custom key generators and stores need only this import.
export { ipKeyGenerator, memoryStore, RateKitError, RateKitOptionError } from '@ratekit/core';
export type { AlgorithmName, Decision, LimitOptions, RateLimitStore } from '@ratekit/core';

/** @deprecated express-rate-limit 8.6's time constants (deprecated there too): one second, in ms. */
export const SECOND = 1_000;
/** @deprecated one minute, in ms. */
export const MINUTE = 60 * SECOND;
/** @deprecated one hour, in ms. */
export const HOUR = 60 * MINUTE;
/** @deprecated one day, in ms. */
export const DAY = 24 * HOUR;
