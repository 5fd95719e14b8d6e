/**
 * The options of the memory store (`memoryStore`), their defaults and their checks.
 *
 * @module
 */
import { assertInteger, assertNonNegative } from '../validate.js';

/** Options of `memoryStore`. */
export interface MemoryStoreOptions {
  /**
   * The most keys held in the LRU. When it is full, the least recently used
   * key is evicted: dropped when its state is expired, full or has at least
   * half its budget left (a fresh state differs from it by less than half a
   * budget); kept aside when it has less than half left, in a second store
   * of `ceil(maxKeys / 10)` keys that evicts the key with the most budget
   * left first. So the store holds at most `maxKeys + ceil(maxKeys / 10)`
   * keys, and a flood of new keys cannot hand a refused client its budget
   * back: that takes `ceil(maxKeys / 10)` keys that have each spent their
   * whole budget too (see `stores/eviction.ts`). Size it above the number of
   * clients active within your longest window. The LRU index and the state
   * slab take 40 bytes per slot (a policy of several limits adds 8 to 24
   * bytes per limit); they start at 1,024 slots and double as keys arrive, so a
   * large bound costs memory only once that many keys are active.
   * @default 100_000
   */
  maxKeys?: number;
  /**
   * How often, in ms of the caller's clock (`nowMs`), to drop idle keys whose
   * state has expired (a full bucket, a past window): the first decision at
   * or after each interval prunes before it decides (see `memoryStore`).
   * No timer: a store made at module scope, as a Cloudflare Worker makes it,
   * starts nothing. 0 disables it (expired keys are then only reclaimed by
   * LRU eviction, which is lossless for them).
   * @default 60_000
   */
  pruneIntervalMs?: number;
}

/** {@link MemoryStoreOptions} with their defaults, checked. */
export interface ResolvedMemoryStoreOptions {
  readonly maxKeys: number;
  readonly pruneIntervalMs: number;
}

/**
 * Checks `options` and applies the defaults (`maxKeys` 100 000, `pruneIntervalMs` 60 000).
 *
 * @throws {RateKitOptionError} when `maxKeys` is not an integer ≥ 1 or `pruneIntervalMs` is not a number ≥ 0.
 */
export function resolveMemoryStoreOptions(options: MemoryStoreOptions): ResolvedMemoryStoreOptions {
  const maxKeys = options.maxKeys ?? 100_000;
  assertInteger('maxKeys', maxKeys, 1);
  const pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  assertNonNegative('pruneIntervalMs', pruneIntervalMs, ' of milliseconds');
  return { maxKeys, pruneIntervalMs };
}
