/**
 * RateLimiterMemory: rate-limiter-flexible's in-process fixed window
 * (`lib/RateLimiterMemory.js`, rlf 11.4), on a store without timers
 * (memory-storage.ts).
 *
 * The window starts at a key's first consume and lasts `duration` seconds;
 * every consume counts, refusals included; a consume is refused when the
 * window's consumed points, its own included, exceed `points`. With
 * `blockDuration`, the consume that first crosses `points` rewrites the key
 * to last `blockDuration` seconds from then.
 *
 * @module
 */
import { assertFunction, assertInteger } from '@ratekit/core';
import { RateLimiterAbstract } from './abstract.js';
import type { AllOrNothingAnswer, AllOrNothingEntry } from './all-or-nothing.js';
import { consumeAllOrNothingInMemory, PROCESS_MEMORY_STORE } from './memory-all-or-nothing.js';
import { MemoryStorage } from './memory-storage.js';
import type {
  IRateLimiterMemoryExport,
  IRateLimiterMemoryRecord,
  IRateLimiterOptions,
  IRateLimiterRestoreBucketDetail,
  IRateLimiterRestoreDetailResponse,
  IRateLimiterRestoreResponse,
  RateLimiterCallOptions,
} from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { execEvenlyDelayMs } from './store-abstract.js';

/** RateLimiterMemory's options: rlf's, and ratekit's store bound. */
export interface RateLimiterMemoryOptions extends IRateLimiterOptions {
  /**
   * ratekit: the number of keys at which ended windows are swept (default 100 000).
   * Live keys are never dropped, so a flood of live keys can take the store past it.
   */
  maxKeys?: number;
  /** ratekit, for tests: the clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

type Bucket = keyof IRateLimiterRestoreResponse;

/**
 * An in-process fixed-window limiter, as rlf's RateLimiterMemory.
 *
 * @throws {Error} at construction with rlf's messages (see RateLimiterAbstract);
 *   a `RateKitOptionError` (`ERR_RATEKIT_INVALID_OPTION`) for ratekit's `maxKeys` (an integer ≥ 1) or `now` (a function).
 * @example
 * ```ts
 * const limiter = new RateLimiterMemory({ points: 5, duration: 60 });
 * await limiter.consume(ip); // rejects with a RateLimiterRes on the 6th call in a minute
 * ```
 */
export class RateLimiterMemory extends RateLimiterAbstract {
  /** The records, rlf's `_memoryStorage` (with `_storage`, `get`, `set`, `incrby`, `delete`). */
  readonly _memoryStorage: MemoryStorage;
  readonly #now: () => number;

  constructor(opts: RateLimiterMemoryOptions = {} as RateLimiterMemoryOptions) {
    super(opts);
    if (opts.maxKeys !== undefined) assertInteger('maxKeys', opts.maxKeys, 1);
    if (opts.now !== undefined) assertFunction('now', opts.now);
    this.#now = opts.now ?? Date.now;
    this._memoryStorage = new MemoryStorage(opts.maxKeys, this.#now);
  }

  /** Consumes points; rejects with a RateLimiterRes past `points`. With execEvenly, resolves after a delay. */
  override consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      const nowMs = this.#now();
      const rlKey = this.getKey(key);
      let res = this._memoryStorage.incrby(rlKey, pointsToConsume, this._getKeySecDuration(options), nowMs);
      res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);

      if (res.consumedPoints > this.points) {
        // Only the consume that first crosses the limit blocks the key.
        if (this.blockDuration > 0 && res.consumedPoints <= this.points + pointsToConsume) {
          res = this._memoryStorage.set(rlKey, res.consumedPoints, this.blockDuration, nowMs);
        }
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a refusal rejects with a RateLimiterRes (rlf's contract)
        reject(res);
      } else if (this.execEvenly && this.points > 0 && res.msBeforeNext > 0 && !res.isFirstInDuration) {
        const delayMs = execEvenlyDelayMs(res, this.execEvenlyMinDelayMs);
        res.msBeforeNext = Math.max(res.msBeforeNext - delayMs, 0);
        setTimeout(resolve, delayMs, res);
      } else {
        resolve(res);
      }
    });
  }

  /** Adds points without checking the limit. */
  override penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return Promise.resolve(this.#change(key, points, options));
  }

  /** Gives points back without checking the limit. */
  override reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return Promise.resolve(this.#change(key, -points, options));
  }

  /** Blocks the key for `secDuration` seconds (0: forever) by setting it to `points + 1`. */
  override block(key: string | number, secDuration: number): Promise<RateLimiterRes> {
    const msDuration = secDuration * 1000;
    const initPoints = this.points + 1;
    this._memoryStorage.set(this.getKey(key), initPoints, secDuration, this.#now());
    return Promise.resolve(new RateLimiterRes(0, msDuration === 0 ? -1 : msDuration, initPoints));
  }

  /** Sets the key to `points` for `secDuration` seconds (0: forever; missing or negative: `duration`). */
  override set(key: string | number, points: number, secDuration?: number): Promise<RateLimiterRes> {
    const sec = secDuration !== undefined && secDuration >= 0 ? secDuration : this.duration;
    this._memoryStorage.set(this.getKey(key), points, sec, this.#now());
    return Promise.resolve(new RateLimiterRes(0, sec === 0 ? -1 : sec * 1000, points));
  }

  /** The key's state, or null when it has none (or its window has ended). */
  override get(key: string | number): Promise<RateLimiterRes | null> {
    const res = this._memoryStorage.get(this.getKey(key), this.#now());
    if (res !== null) res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    return Promise.resolve(res);
  }

  /** Deletes the key; true when it had a live window. */
  override delete(key: string | number): Promise<boolean> {
    return Promise.resolve(this._memoryStorage.delete(this.getKey(key), this.#now()));
  }

  /**
   * A snapshot of every live key (rlf 11.1's version 1 format): keys without
   * the prefix, `expiresAt` in epoch milliseconds or null.
   */
  dump(): IRateLimiterMemoryExport {
    const nowMs = this.#now();
    const storage: IRateLimiterMemoryRecord[] = [];
    for (const [rlKey, record] of this._memoryStorage.live(nowMs)) {
      storage.push({ key: this.parseKey(rlKey), value: record.value, expiresAt: record.expiresAt });
    }
    return { version: 1, dumpedAt: nowMs, storage };
  }

  /**
   * Loads a {@link dump} snapshot (into this limiter's prefix). Each entry is
   * counted as `invalid` (not an object, or a key that is not a string or
   * number, a value that is not finite, an expiry that is neither null nor
   * finite), `expired`, or `restored`; with `detailResponse`, with its keys.
   * @returns the counts, or undefined when `data` is not a version 1 snapshot (nothing is thrown)
   */
  restore(data: Omit<IRateLimiterMemoryExport, 'dumpedAt'>, detailResponse: true): IRateLimiterRestoreDetailResponse | undefined;
  restore(data: Omit<IRateLimiterMemoryExport, 'dumpedAt'>, detailResponse?: false): IRateLimiterRestoreResponse | undefined;
  restore(data: Omit<IRateLimiterMemoryExport, 'dumpedAt'>, detailResponse?: boolean): IRateLimiterRestoreResponse | IRateLimiterRestoreDetailResponse | undefined;
  restore(data: Omit<IRateLimiterMemoryExport, 'dumpedAt'>, detailResponse = false): IRateLimiterRestoreResponse | IRateLimiterRestoreDetailResponse | undefined {
    const snapshot = data as unknown;
    if (snapshot === null || typeof snapshot !== 'object' || (snapshot as { version?: unknown }).version !== 1) return undefined;

    const counts: IRateLimiterRestoreResponse = { invalid: 0, expired: 0, restored: 0 };
    const details: IRateLimiterRestoreDetailResponse = { invalid: detail(), expired: detail(), restored: detail() };
    const count = (bucket: Bucket, key: unknown): void => {
      counts[bucket] += 1;
      details[bucket].count += 1;
      details[bucket].keys.push(key as string | number);
    };

    const items: unknown = (snapshot as { storage?: unknown }).storage;
    if (Array.isArray(items)) {
      const nowMs = this.#now();
      for (const item of items as unknown[]) {
        if (item === null || typeof item !== 'object') {
          count('invalid', 'N/A');
          continue;
        }
        const { key, value, expiresAt } = item as Record<string, unknown>;
        const validKey = typeof key === 'string' || typeof key === 'number';
        if (!validKey || !Number.isFinite(value) || !(expiresAt === null || Number.isFinite(expiresAt))) {
          count('invalid', key);
          continue;
        }
        if (expiresAt !== null && (expiresAt as number) <= nowMs) {
          count('expired', key);
          continue;
        }
        this._memoryStorage._restoreRecord(this.getKey(key), value as number, expiresAt as number | null, nowMs);
        count('restored', key);
      }
    }
    return detailResponse ? details : counts;
  }

  /** ratekit (H2, all-or-nothing.ts): every in-process memory limiter can share one all-or-nothing union call. */
  get _allOrNothingStore(): object {
    return PROCESS_MEMORY_STORE;
  }

  /** ratekit (H2): an all-or-nothing union's one call, a synchronous pass at this limiter's clock (memory-all-or-nothing.ts). */
  _consumeAllOrNothing(entries: readonly AllOrNothingEntry[]): Promise<AllOrNothingAnswer> {
    return consumeAllOrNothingInMemory(entries, this.#now());
  }

  #change(key: string | number, points: number, options: RateLimiterCallOptions): RateLimiterRes {
    const res = this._memoryStorage.incrby(this.getKey(key), points, this._getKeySecDuration(options), this.#now());
    res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    return res;
  }
}

function detail(): IRateLimiterRestoreBucketDetail {
  return { count: 0, keys: [] };
}
