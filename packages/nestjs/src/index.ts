/**
 * @ratekit/nestjs: a drop-in for @nestjs/throttler 6 (the same module, guard, decorators, storage
 * contract and responses) on ratekit's bounded memory store or any ratekit store, with ratekit's
 * algorithms, all-or-nothing policies and IETF RateLimit headers one option away.
 *
 * @module
 */
export { InjectThrottlerOptions, InjectThrottlerStorage, SkipThrottle, Throttle } from './decorators.js';
export type { ThrottlerMethodOrControllerOptions } from './decorators.js';
export { ThrottlerException, throttlerMessage } from './exception.js';
export { ThrottlerGuard } from './guard.js';
export type { ThrottlerLimitDetail, ThrottlerRequest } from './guard-types.js';
export { ThrottlerModule } from './module.js';
export type {
  RateKitModuleOptions,
  RateKitThrottlerOptions,
  Resolvable,
  ThrottlerAsyncOptions,
  ThrottlerGenerateKeyFunction,
  ThrottlerGetTrackerFunction,
  ThrottlerModuleOptions,
  ThrottlerOptions,
  ThrottlerOptionsFactory,
} from './options.js';
export type { PolicyEntry } from './policy.js';
export { getOptionsToken, getStorageToken } from './providers.js';
export { ThrottlerStorage } from './storage.js';
export type { ThrottlerStorageRecord } from './storage.js';
export { ThrottlerStorageService } from './storage-service.js';
export type { ThrottlerStorageServiceOptions } from './storage-service.js';
export { days, hours, minutes, seconds, weeks } from './utilities.js';
