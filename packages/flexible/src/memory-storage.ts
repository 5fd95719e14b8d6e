/**
 * The in-process store behind RateLimiterMemory: one record per key, its
 * consumed points and the epoch millisecond its window ends (null: never).
 *
 * The rule, and why it is safe: a record is only ever removed once its
 * window has ended (or by `delete`), so forgetting state can never reset a
 * live limit early; an ended window is worth nothing (the next consume
 * starts a fresh one, as rlf does). There is no timer, per key or
 * otherwise: an ended record is replaced when its key is next written,
 * treated as absent when read, and swept when the store grows past
 * `maxKeys` (rlf sets one `setTimeout` per key, which overflows past 24.8
 * days, #71, and never fires on edge runtimes, #238).
 *
 * The sweep runs when the store reaches the next threshold; after it, the
 * threshold is `max(maxKeys, 2 × size)`, so its cost is amortised over the
 * writes that grew the store and the store holds at most
 * `max(maxKeys, 2 × live keys)` records. It never drops a live key to stay
 * under `maxKeys`: a limiter that forgot a live key would admit it again.
 *
 * Field names follow rlf's `MemoryStorage` (`_storage`, a Map of records with
 * `value` and `expiresAt`), because rlf's tests and some users read them.
 *
 * @module
 */
import { RateLimiterRes } from './rate-limiter-res.js';

/** The store sweeps ended records when it reaches this many keys, by default. */
export const DEFAULT_MEMORY_MAX_KEYS = 100_000;

/** rlf's `parseInt(value, 10)` of a record's value, without a string round trip for ordinary numbers. */
function toInteger(value: number): number {
  // parseInt reads -0 as "0" (a reward of 0 points stores 0, not -0); Math.trunc would keep the sign.
  if (value === 0) return 0;
  return Math.abs(value) < 1e21 ? Math.trunc(value) : parseInt(String(value), 10);
}

/** One key's state: consumed points, and when the window ends (epoch ms, or null for never). */
export class MemoryRecord {
  _value: number;
  _expiresAt: number | null;

  constructor(value: number, expiresAt: number | null) {
    this._value = toInteger(value);
    this._expiresAt = expiresAt;
  }

  get value(): number {
    return this._value;
  }

  /** Truncated to an integer, as rlf's Record does. */
  set value(value: number) {
    this._value = toInteger(value);
  }

  get expiresAt(): number | null {
    return this._expiresAt;
  }

  /** A Date is stored as its epoch milliseconds, as rlf's Record does. */
  set expiresAt(value: number | Date | null) {
    this._expiresAt = value instanceof Date ? value.getTime() : value;
  }
}

/** True when the record's window has ended at `nowMs`. */
export function isExpired(record: MemoryRecord, nowMs: number): boolean {
  return record._expiresAt !== null && record._expiresAt <= nowMs;
}

/** Records by key, without timers; see the module's doc. */
export class MemoryStorage {
  readonly _storage = new Map<string, MemoryRecord>();
  readonly maxKeys: number;
  readonly #now: () => number;
  #sweepAt: number;

  /**
   * @param maxKeys - the size at which ended records are swept (not a hard cap; see the module's doc)
   * @param now - the clock, epoch milliseconds (tests pass a fixed one)
   */
  constructor(maxKeys = DEFAULT_MEMORY_MAX_KEYS, now: () => number = Date.now) {
    this.maxKeys = maxKeys;
    this.#now = now;
    this.#sweepAt = maxKeys;
  }

  /**
   * Adds `value` to the key's points. A missing or ended key starts a new
   * window of `durationSec` seconds (0: never ends) at `value`.
   * @returns consumedPoints, msBeforeNext (-1: never) and isFirstInDuration; remainingPoints is left at 0 for the limiter.
   */
  incrby(key: string, value: number, durationSec: number, nowMs = this.#now()): RateLimiterRes {
    const record = this._storage.get(key);
    if (record === undefined || isExpired(record, nowMs)) return this.set(key, value, durationSec, nowMs);
    record.value = record._value + value;
    return new RateLimiterRes(0, record._expiresAt === null ? -1 : record._expiresAt - nowMs, record._value, false);
  }

  /** Sets the key to `value` for `durationSec` seconds (0, or not a positive number: never ends). */
  set(key: string, value: number, durationSec: number, nowMs = this.#now()): RateLimiterRes {
    const durationMs = durationSec * 1000;
    const record = new MemoryRecord(value, durationMs > 0 ? nowMs + durationMs : null);
    this.#put(key, record, nowMs);
    return new RateLimiterRes(0, durationMs > 0 ? durationMs : -1, record._value, true);
  }

  /** The key's state, or null when it is missing or its window has ended. */
  get(key: string, nowMs = this.#now()): RateLimiterRes | null {
    const record = this._storage.get(key);
    if (record === undefined) return null;
    if (isExpired(record, nowMs)) {
      this._storage.delete(key);
      return null;
    }
    return new RateLimiterRes(0, record._expiresAt === null ? -1 : record._expiresAt - nowMs, record._value, false);
  }

  /** Removes the key; true when it held a live record. */
  delete(key: string, nowMs = this.#now()): boolean {
    const record = this._storage.get(key);
    if (record === undefined) return false;
    this._storage.delete(key);
    return !isExpired(record, nowMs);
  }

  /** Puts back a dumped record; an ended or malformed one is ignored. */
  _restoreRecord(key: string, value: number, expiresAt: number | null, nowMs = this.#now()): void {
    if (expiresAt !== null && (!Number.isFinite(expiresAt) || expiresAt <= nowMs)) return;
    this.#put(key, new MemoryRecord(value, expiresAt), nowMs);
  }

  /** The live records, in insertion order. */
  *live(nowMs = this.#now()): IterableIterator<[string, MemoryRecord]> {
    for (const entry of this._storage) if (!isExpired(entry[1], nowMs)) yield entry;
  }

  /** Removes every ended record. @returns how many were removed */
  sweep(nowMs = this.#now()): number {
    let removed = 0;
    for (const [key, record] of this._storage) {
      if (isExpired(record, nowMs)) {
        this._storage.delete(key);
        removed++;
      }
    }
    this.#sweepAt = Math.max(this.maxKeys, this._storage.size * 2);
    return removed;
  }

  get size(): number {
    return this._storage.size;
  }

  #put(key: string, record: MemoryRecord, nowMs: number): void {
    // Delete first so a rewritten key moves to the end: insertion order is then roughly expiry order.
    this._storage.delete(key);
    this._storage.set(key, record);
    if (this._storage.size > this.#sweepAt) this.sweep(nowMs);
  }
}
