import type { OnApplicationShutdown } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import {
  type AlgorithmName,
  assertObject,
  createLimiter,
  type Decision,
  type Limiter,
  type LimitOptions,
  MAX_BLOCK_DURATION_MS,
  memoryStore,
  type RateLimitStore,
  RateKitOptionError,
  type StoreErrorPolicy,
} from '@ratekit/core';
import type { ThrottlerStorage, ThrottlerStorageRecord } from './storage.js';

/** Options of {@link ThrottlerStorageService}. */
export interface ThrottlerStorageServiceOptions {
  /** Where the counts live: any ratekit store. @default a bounded `memoryStore()` (100,000 keys, flood-proof eviction) */
  store?: RateLimitStore;
  /** The namespace of these counts in the store (several apps can share one Redis). @default 'throttler:' */
  prefix?: string;
  /**
   * The algorithm counting the hits of each key. `fixed-window` counts in a window of `ttl` that
   * starts at the key's first hit (one counter per key; the window @nestjs/throttler's
   * `X-RateLimit-Reset` shows); `sliding-log` admits exactly what @nestjs/throttler's memory storage
   * admits (each hit expires `ttl` after it), at the cost of one entry per hit in the window.
   * @default 'fixed-window'
   */
  algorithm?: AlgorithmName;
  /** What a failing or timed-out store call turns into. @default 'throw' (the request fails with 500, as a failing @nestjs/throttler storage does) */
  onStoreError?: StoreErrorPolicy;
  /** The longest a store call may take, in ms. @default 1_000 */
  storeTimeoutMs?: number;
  /** The clock, Unix epoch ms, for tests (stores on their server's clock ignore it). @default Date.now */
  now?: () => number;
}

/** The capacity of the block gate (see below): never reached by counting. */
const GATE_CAPACITY = 2 ** 31 - 1;
/** Distinct (limit, ttl, blockDuration) triples whose limit objects are kept; more are rebuilt. */
const MAX_CACHED_POLICIES = 256;
const OPTION_KEYS = ['store', 'prefix', 'algorithm', 'onStoreError', 'storeTimeoutMs', 'now'];

/**
 * @nestjs/throttler's `ThrottlerStorage` on any ratekit store: the bounded in-memory store by
 * default, or Redis and Redis Cluster, PostgreSQL, Memcached. Each `increment()` is one atomic
 * store call on the store's clock (the server's for remote stores), so every instance of an app
 * shares one count. It is the default storage of `ThrottlerModule`, and it can be handed to
 * @nestjs/throttler itself as `storage:`.
 *
 * Semantics are @nestjs/throttler's: `limit` hits per `ttl` ms in a window that starts at the
 * key's first hit; the hit that goes over the limit blocks the key for `blockDuration` ms; when the
 * block ends, the count starts again from zero. Two layouts give them:
 * - the usual case, a fixed window and a block at least as long as `ttl` (the default
 *   `blockDuration` is `ttl`): one limit, `hits`, with ratekit's block (`blockDurationMs`). The hit
 *   over the limit blocks it in the same store call, a blocked key is refused from that one
 *   limit's state, and when the block ends the window it counted in has ended too, so the count
 *   starts from zero: one store call per hit, always;
 * - a shorter block (or 0), or another `algorithm`: two limits of one policy, `hits` (the counter)
 *   and `block` (a gate that only ever refuses during a block, whose fixed window is the
 *   `timeToExpire` every algorithm reports). The hit over the limit makes two more store calls: one
 *   that blocks the gate, one that gives the counter back (the count must restart when a block
 *   shorter than the window ends).
 *
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) on a bad option.
 * @example
 * ```ts
 * import { ThrottlerModule } from '@nestjs/throttler';
 * import { ThrottlerStorageService } from '@ratekit/nestjs';
 * import { redisStore } from '@ratekit/redis';
 *
 * ThrottlerModule.forRoot({
 *   throttlers: [{ ttl: 60_000, limit: 100 }],
 *   storage: new ThrottlerStorageService({ store: redisStore({ client }) }),
 * });
 * ```
 */
export class ThrottlerStorageService implements ThrottlerStorage, OnApplicationShutdown {
  private readonly store: RateLimitStore;
  private readonly ownsStore: boolean;
  private readonly prefix: string;
  private readonly algorithm: AlgorithmName;
  private readonly limiterOptions: Pick<ThrottlerStorageServiceOptions, 'onStoreError' | 'storeTimeoutMs' | 'now'>;
  private readonly limiters = new Map<string, Limiter<readonly LimitOptions[]>>();
  private readonly policies = new Map<string, readonly LimitOptions[]>();
  /** The last policy asked for, and its (limit, ttl, blockDuration): most apps have one, so its id string is not rebuilt per hit. */
  private last: { limit: number; ttl: number; blockDuration: number; policy: readonly LimitOptions[] } | undefined;

  /** @param options - a ratekit store, or {@link ThrottlerStorageServiceOptions}; none: a bounded in-memory store */
  constructor(options?: RateLimitStore | ThrottlerStorageServiceOptions) {
    const raw: unknown = isStore(options) ? { store: options } : (options ?? {});
    assertObject('options', raw);
    const given = raw as ThrottlerStorageServiceOptions;
    for (const key of Object.keys(given)) {
      if (!OPTION_KEYS.includes(key)) throw new RateKitOptionError(key, `one of ${OPTION_KEYS.join(', ')}`, (given as Record<string, unknown>)[key]);
    }
    if (given.store !== undefined && !isStore(given.store)) throw new RateKitOptionError('store', 'a ratekit store (with evaluate and resetKey)', given.store);
    this.prefix = given.prefix ?? 'throttler:';
    this.algorithm = given.algorithm ?? 'fixed-window';
    this.limiterOptions = { onStoreError: given.onStoreError, storeTimeoutMs: given.storeTimeoutMs, now: given.now };
    // Check every option now, on a throwaway policy, before a store (and its timer) is made.
    createLimiter({ limits: this.policy(1, 1_000, 1_000), store: given.store ?? memoryStore({ pruneIntervalMs: 0 }), prefix: this.prefix, ...this.defined() });
    this.store = given.store ?? memoryStore();
    this.ownsStore = given.store === undefined;
  }

  /**
   * Counts one hit of `key` for `throttlerName`: `limit` per `ttl` ms, blocked for
   * `blockDuration` ms once over. Rejects when the store fails (per `onStoreError`).
   */
  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const limiter = this.limiterFor(throttlerName);
    const policy = this.policy(limit, ttl, blockDuration);
    const call = { context: policy };
    let decision = await limiter.consume(key, call);
    // One limit (see above): its own answer is the record, the hit over the limit included.
    if (policy.length === 1) return record(decision, limit);
    if (!decision.allowed && !decision.limits[0]!.allowed && decision.limits[1]!.allowed) {
      // Over the limit, not blocked yet: block the gate, then give the counter back, so the count
      // starts from zero when the block ends (@nestjs/throttler's reset). Refusals charge nothing,
      // so the counter holds exactly `limit` here.
      if (blockDuration > 0) {
        await limiter.consume(key, { context: policy, cost: GATE_CAPACITY + 1 });
        await limiter.refund(key, { context: policy, cost: limit });
        return { totalHits: limit + 1, timeToExpire: seconds(decision.limits[1]!.resetMs), isBlocked: true, timeToBlockExpire: seconds(blockDuration) };
      }
      // No block at all: upstream resets the count at once and counts this hit.
      await limiter.refund(key, { context: policy, cost: limit });
      decision = await limiter.consume(key, call);
    }
    return record(decision, limit);
  }

  /** Frees the in-memory store's timer (a given store is the caller's to close). */
  onApplicationShutdown(): void {
    if (this.ownsStore) void this.store.dispose?.();
  }

  private limiterFor(throttlerName: string): Limiter<readonly LimitOptions[]> {
    let limiter = this.limiters.get(throttlerName);
    if (limiter === undefined) {
      limiter = createLimiter<readonly LimitOptions[]>({
        limits: (policy) => policy,
        store: this.store,
        prefix: `${this.prefix}${throttlerName.replaceAll('\u0000', '')}`,
        ...this.defined(),
      });
      this.limiters.set(throttlerName, limiter);
    }
    return limiter;
  }

  /** The limits for (limit, ttl, blockDuration) (see the class's layouts), the same objects each time (validated once). */
  private policy(limit: number, ttl: number, blockDuration: number): readonly LimitOptions[] {
    const last = this.last;
    if (last !== undefined && last.limit === limit && last.ttl === ttl && last.blockDuration === blockDuration) return last.policy;
    this.last = { limit, ttl, blockDuration, policy: this.policyOf(limit, ttl, blockDuration) };
    return this.last.policy;
  }

  private policyOf(limit: number, ttl: number, blockDuration: number): readonly LimitOptions[] {
    const id = `${limit}/${ttl}/${blockDuration}`;
    let policy = this.policies.get(id);
    if (policy === undefined) {
      if (this.policies.size >= MAX_CACHED_POLICIES) this.policies.clear();
      const blockDurationMs = Math.min(Math.max(blockDuration, 0), MAX_BLOCK_DURATION_MS);
      policy =
        this.algorithm === 'fixed-window' && blockDurationMs >= ttl
          ? [{ name: 'hits', algorithm: 'fixed-window', limit, windowMs: ttl, blockDurationMs }]
          : [
              { name: 'hits', algorithm: this.algorithm, limit, windowMs: ttl },
              { name: 'block', algorithm: 'fixed-window', limit: GATE_CAPACITY, windowMs: ttl, blockDurationMs },
            ];
      this.policies.set(id, policy);
    }
    return policy;
  }

  private defined(): Pick<ThrottlerStorageServiceOptions, 'onStoreError' | 'storeTimeoutMs' | 'now'> {
    const out: Pick<ThrottlerStorageServiceOptions, 'onStoreError' | 'storeTimeoutMs' | 'now'> = {};
    if (this.limiterOptions.onStoreError !== undefined) out.onStoreError = this.limiterOptions.onStoreError;
    if (this.limiterOptions.storeTimeoutMs !== undefined) out.storeTimeoutMs = this.limiterOptions.storeTimeoutMs;
    if (this.limiterOptions.now !== undefined) out.now = this.limiterOptions.now;
    return out;
  }
}
Injectable()(ThrottlerStorageService);

/**
 * The record of a decision on [hits, block], or on [hits] alone, which is then its own gate.
 * `timeToExpire` is the gate's window (a fixed window of `ttl` from the key's first hit, renewed at
 * the first hit after it ends): @nestjs/throttler's `expiresAt`, whatever algorithm counts the hits;
 * while the key is blocked, the later of that window's end and the block's.
 */
function record(decision: Decision, limit: number): ThrottlerStorageRecord {
  const hits = decision.limits[0]!;
  const gate = decision.limits[decision.limits.length - 1]!;
  if (decision.allowed) return { totalHits: Math.max(0, limit - hits.remaining), timeToExpire: seconds(gate.resetMs), isBlocked: false, timeToBlockExpire: 0 };
  // Blocked; or refused with no limit refusing: the store failed and `onStoreError` is 'deny'.
  const retryAfterMs = gate.allowed ? decision.retryAfterMs : gate.retryAfterMs;
  return { totalHits: limit + 1, timeToExpire: seconds(gate.resetMs), isBlocked: true, timeToBlockExpire: seconds(retryAfterMs) };
}

/** Whole seconds, rounded up (upstream's `Math.ceil(ms / 1000)`). */
function seconds(ms: number): number {
  return Number.isFinite(ms) ? Math.ceil(ms / 1_000) : 0;
}

function isStore(value: unknown): value is RateLimitStore {
  return typeof value === 'object' && value !== null && typeof (value as RateLimitStore).evaluate === 'function' && typeof (value as RateLimitStore).resetKey === 'function';
}
