/**
 * rate-limiter-flexible's option and result interfaces, under rlf's own names
 * (`types.d.ts` of rlf 11.4.0), so code typed against rlf compiles unchanged.
 * The classes that take them validate them at construction with rlf's own
 * messages (see abstract.ts and store-abstract.ts).
 *
 * Units are rlf's: `duration`, `blockDuration`, `inMemoryBlockDuration` and
 * `secDuration` arguments are seconds; `msBeforeNext`, `execEvenlyMinDelayMs`
 * and `timeoutMs` milliseconds.
 *
 * @module
 */
import type { RateLimiterAbstract } from './abstract.js';
import type { RateLimiterCompatibleAbstract } from './compatible-abstract.js';

/** Any limiter a wrapper, a Union or `insuranceLimiter` accepts. */
export type RateLimiterLike = RateLimiterAbstract | RateLimiterCompatibleAbstract;

/**
 * The per-call options of consume, penalty, reward, get, set, block and delete.
 * rlf reads `customDuration` (seconds, ≥ 0 replaces `duration` for this key's new window);
 * store limiters may read others.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so, and code typed against rlf passes anything
export type RateLimiterCallOptions = { [key: string]: any };

/** Options of every limiter (rlf's RateLimiterAbstract). */
export interface IRateLimiterOptions {
  /** Prefix of every stored key, `prefix:key`; `''` means none. Default `'rlflx'`. */
  keyPrefix?: string;
  /** Points a key may consume per `duration`. Required, finite; 0 and negative values are allowed. */
  points: number;
  /** Seconds before consumed points reset, counted from the window's first consume; 0 never resets. Required. */
  duration: number;
  /** Delay allowed actions to spread them over the duration. Default false. */
  execEvenly?: boolean;
  /** Milliseconds; the smallest execEvenly delay. Default `ceil(duration * 1000 / points)`, 0 when points ≤ 0. */
  execEvenlyMinDelayMs?: number;
  /** Seconds a key is blocked once it consumes more than `points`; 0 (default) blocks for the rest of the window only. */
  blockDuration?: number;
  /** A limiter that answers instead when this one's store fails. */
  insuranceLimiter?: RateLimiterLike;
}

/** Options of RateLimiterCluster. */
export interface IRateLimiterClusterOptions extends IRateLimiterOptions {
  /** Milliseconds to wait for the master's answer. Default 5000. */
  timeoutMs?: number;
}

/** Options of every store limiter (rlf's RateLimiterStoreAbstract). */
export interface IRateLimiterStoreOptions extends IRateLimiterOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each store takes its own client type
  storeClient: any;
  storeType?: string;
  /** Consumed points at which the key is refused in-process, without a store call, until its window ends. 0 = off. */
  inMemoryBlockOnConsumed?: number;
  /** Seconds of that in-process refusal, counted from the first refusal, instead of the window's end. */
  inMemoryBlockDuration?: number;
  /** Consumed points at which the stored key is blocked for `blockDuration` (rlf 11.4). 0 = at `points + 1`. */
  blockOnConsumed?: number;
  insuranceLimiter?: RateLimiterLike;
  dbName?: string;
  tableName?: string;
  tableCreated?: boolean;
}

/** Options of stores whose rows do not expire by themselves. */
export interface IRateLimiterStoreNoAutoExpiryOptions extends IRateLimiterStoreOptions {
  /** Delete rows expired more than an hour ago, every five minutes. Default true. */
  clearExpiredByTimeout?: boolean;
}

/** Options of rlf's Drizzle stores (out of scope here; kept for the types). */
export interface IRateLimiterStoreNoAutoExpiryOptionsAndSchema extends IRateLimiterStoreNoAutoExpiryOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so
  schema: any;
}

/** Options of RateLimiterPostgres. */
export interface IRateLimiterPostgresOptions extends IRateLimiterStoreNoAutoExpiryOptions {
  schemaName?: string;
}

/** Options of RateLimiterRedis. */
export interface IRateLimiterRedisOptions extends IRateLimiterStoreOptions {
  rejectIfRedisNotReady?: boolean;
  useRedisPackage?: boolean;
  useRedis3AndLowerPackage?: boolean;
  customIncrTtlLuaScript?: string;
}

/** Options of rlf's Mongo store (out of scope here; kept for the types). */
export interface IRateLimiterMongoOptions extends IRateLimiterStoreOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so
  indexKeyPrefix?: { [key: string]: any };
  disableIndexesCreation?: boolean;
}

/** Options of rlf's Valkey store (out of scope here; kept for the types). */
export interface IRateLimiterValkeyOptions extends IRateLimiterStoreOptions {
  customIncrTtlLuaScript?: string;
  rejectIfValkeyNotReady?: boolean;
}

/** Called once a SQL store's table is ready, or with the error that kept it from being. */
export interface ICallbackReady {
  (error?: Error): void;
}

/** Options of RLWrapperBlackAndWhite. */
export interface IRLWrapperBlackAndWhiteOptions {
  limiter: RateLimiterLike;
  blackList?: string[] | number[];
  whiteList?: string[] | number[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so
  isBlackListed?(key: any): boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so
  isWhiteListed?(key: any): boolean;
  runActionAnyway?: boolean;
}

/** Options of RLWrapperTimeouts. */
export interface IRLWrapperTimeoutsOptions extends Omit<IRateLimiterOptions, 'points' | 'duration'> {
  limiter: RateLimiterLike;
  /** Milliseconds before a call rejects with `Error('Operation timed out')`. */
  timeoutMs?: number;
}

/** Options of RateLimiterQueue. */
export interface IRateLimiterQueueOpts {
  /** Requests waiting per key at most. Default 4294967295. */
  maxQueueSize?: number;
}

/** One key of a RateLimiterMemory snapshot. `expiresAt` is epoch milliseconds, or null for never. */
export interface IRateLimiterMemoryRecord {
  key: string | number;
  value: number;
  expiresAt: number | null;
}

/** RateLimiterMemory.dump()'s snapshot (version 1). */
export interface IRateLimiterMemoryExport {
  version: number;
  dumpedAt: number;
  storage: IRateLimiterMemoryRecord[];
}

/** What RateLimiterMemory.restore() counted, per bucket. */
export interface IRateLimiterRestoreResult<T> {
  invalid: T;
  expired: T;
  restored: T;
}

export type IRateLimiterRestoreResponse = IRateLimiterRestoreResult<number>;

export interface IRateLimiterRestoreBucketDetail {
  count: number;
  keys: Array<string | number>;
}

export type IRateLimiterRestoreDetailResponse = IRateLimiterRestoreResult<IRateLimiterRestoreBucketDetail>;
