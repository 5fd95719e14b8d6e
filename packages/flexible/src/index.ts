/**
 * @ratekit/flexible: a drop-in for rate-limiter-flexible 11 on ratekit. The
 * same root names as rlf 11.4's index.js, plus its abstract classes and
 * TypeScript names.
 *
 * @module
 */
export { RateLimiterRes } from './rate-limiter-res.js';
export type { IRateLimiterRes, RateLimiterResJSON } from './rate-limiter-res.js';
export { RateLimiterAbstract } from './abstract.js';
export { RateLimiterCompatibleAbstract, isRateLimiterCompatible } from './compatible-abstract.js';
export { RateLimiterInsuredAbstract } from './insured-abstract.js';
export { RateLimiterStoreAbstract } from './store-abstract.js';
export type {
  ICallbackReady,
  IRateLimiterClusterOptions,
  IRateLimiterMemoryExport,
  IRateLimiterMemoryRecord,
  IRateLimiterMongoOptions,
  IRateLimiterOptions,
  IRateLimiterPostgresOptions,
  IRateLimiterQueueOpts,
  IRateLimiterRedisOptions,
  IRateLimiterRestoreBucketDetail,
  IRateLimiterRestoreDetailResponse,
  IRateLimiterRestoreResponse,
  IRateLimiterRestoreResult,
  IRateLimiterStoreNoAutoExpiryOptions,
  IRateLimiterStoreNoAutoExpiryOptionsAndSchema,
  IRateLimiterStoreOptions,
  IRateLimiterValkeyOptions,
  IRLWrapperBlackAndWhiteOptions,
  IRLWrapperTimeoutsOptions,
  RateLimiterCallOptions,
  RateLimiterLike,
} from './options.js';
export { RateLimiterRedis } from './redis.js';
export type { RateLimiterRedisOptions } from './redis.js';
export { RateLimiterMemory } from './memory.js';
export type { RateLimiterMemoryOptions } from './memory.js';
export { RateLimiterUnion, isRateLimiterUnionRejection } from './union.js';
export type { RateLimiterUnionOptions, RateLimiterUnionRejection, RateLimiterUnionResult } from './union.js';
export type { AllOrNothingAnswer, AllOrNothingEntry, AllOrNothingOutcome, AllOrNothingParticipant } from './all-or-nothing.js';
export { RateLimiterQueue } from './queue.js';
export { RateLimiterQueueError } from './queue-error.js';
export { BurstyRateLimiter } from './bursty.js';
export { RLWrapperBlackAndWhite } from './black-and-white.js';
export { RLWrapperTimeouts } from './timeouts.js';
export { RateLimiterCluster, RateLimiterClusterMaster, RateLimiterClusterMasterPM2 } from './cluster.js';
export { RateLimiterMemcache } from './memcache.js';
export type { MemcachedCallbackClient, MemcacheResult } from './memcache.js';
export { RateLimiterPostgres } from './postgres.js';
export type { PostgresQuery, PostgresResult, PostgresRow, RateLimiterPostgresOptions } from './postgres.js';
export {
  RateKitFlexibleUnsupportedStoreError,
  RateLimiterDrizzle,
  RateLimiterDrizzleNonAtomic,
  RateLimiterDynamo,
  RateLimiterEtcd,
  RateLimiterEtcdNonAtomic,
  RateLimiterEtcdTransactionFailedError,
  RateLimiterSetupError,
  RateLimiterMongo,
  RateLimiterMySQL,
  RateLimiterPrisma,
  RateLimiterSQLite,
  RateLimiterValkeyGlide,
} from './unsupported.js';
export { RateLimiterRedisNonAtomic, RateLimiterValkey } from './redis-variants.js';
export { ERR_UNKNOWN_LIMITER_TYPE_MESSAGE, LIMITER_TYPES } from './constants.js';
export { ExpressBruteFlexible } from './express-brute.js';
export type { BruteFailCallback, BruteMiddlewareOptions, BruteNext, BruteRequest, BruteResponse, BruteStoreError, ExpressBruteFlexibleOptions } from './express-brute.js';
export type { RateLimiterValkeyOptions } from './redis-variants.js';
