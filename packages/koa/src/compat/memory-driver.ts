import type { Driver, DriverAnswer } from './drivers.js';

/** The default bound of the memory driver: keys (`<namespace>:<id>`) kept in its Map. */
export const DEFAULT_MAX_KEYS = 100_000;

/** One key's state, the object koa-ratelimit 6's memory driver stores in its Map, field for field. */
export interface MemoryEntry {
  /** What `id(ctx)` returned. */
  id: unknown;
  /** When the window ends: Unix epoch seconds, with a fraction (µs precision). */
  reset: number;
  /** Requests left in the window, counting down to 0. */
  remaining: number;
  /** `max` when the window opened. */
  total: number;
}

/**
 * koa-ratelimit 6's memory driver, on the `db` Map it is given (or a Map of
 * its own): a fixed window per key that opens at the key's first request
 * and lasts `duration` ms. The Map holds koa-ratelimit's own entries under
 * its own keys (`<namespace>:<id>` → {@link MemoryEntry}), so `db.clear()`
 * resets every count and code reading the Map keeps working.
 *
 * The first request of a window stores `remaining: max` and answers it;
 * each later one decrements `remaining` (not below 0) and answers the
 * result, so `max` requests are admitted per window and refused ones record
 * nothing more. An entry whose window has ended is replaced on the key's
 * next request.
 *
 * Bounded (ratekit's addition; upstream's Map grows for ever): when a new
 * window makes the Map hold more than `maxKeys` entries, one sweep brings it
 * down to 90 % of `maxKeys` (so sweeps are rare), dropping the state closest
 * to a fresh one first: ended windows, then windows with at least half their
 * budget left, then any with budget left, and refused keys last of all, each
 * group oldest window first. So a flood of new keys, which each hold a
 * nearly full budget, cannot push out a refused key and hand it a new
 * window; only a flood of keys that have each spent their whole budget can.
 *
 * @param now - the clock, Unix epoch ms (default `Date.now`, read at call time so fake timers apply)
 */
export class MemoryDriver implements Driver {
  readonly #db: Map<unknown, unknown>;
  readonly #max: number;
  readonly #durationMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(db: Map<unknown, unknown>, max: number, durationMs: number, maxKeys: number = DEFAULT_MAX_KEYS, now: () => number = () => Date.now()) {
    this.#db = db;
    this.#max = max;
    this.#durationMs = durationMs;
    this.#maxKeys = maxKeys;
    this.#now = now;
  }

  get(key: string, id: unknown): DriverAnswer {
    const nowMicros = this.#now() * 1e3;
    const entry = this.#db.get(key) as MemoryEntry | undefined;
    if (entry === undefined || !this.#db.has(key) || entry.reset * 1e6 < nowMicros) {
      const opened: MemoryEntry = { id, reset: (nowMicros + this.#durationMs * 1e3) / 1e6, remaining: this.#max, total: this.#max };
      // Delete first, so a renewed window moves to the end of the Map's order (oldest first).
      this.#db.delete(key);
      this.#db.set(key, opened);
      this.#evict(key);
      return opened;
    }
    entry.remaining = entry.remaining > 0 ? entry.remaining - 1 : 0;
    return entry;
  }

  reset(key: string): void {
    this.#db.delete(key);
  }

  /** Brings the Map back under `maxKeys`, never dropping `newest` (the window just opened). */
  #evict(newest: string): void {
    const db = this.#db;
    if (db.size <= this.#maxKeys) return;
    const target = Math.max(1, this.#maxKeys - Math.floor(this.#maxKeys / 10));
    const nowSeconds = this.#now() / 1e3;
    // Pass 0: ended windows; 1: half the budget or more left; 2: any budget left; 3: refused.
    for (let pass = 0; pass < 4 && db.size > target; pass++) {
      for (const [key, value] of db) {
        if (db.size <= target) return;
        if (key !== newest && evictableIn(pass, value, nowSeconds)) db.delete(key);
      }
    }
  }
}

/** Whether an entry goes in eviction pass `pass` (anything that is not an entry goes in the first). */
function evictableIn(pass: number, value: unknown, nowSeconds: number): boolean {
  const entry = value as Partial<MemoryEntry> | null;
  if (typeof entry !== 'object' || entry === null || typeof entry.reset !== 'number' || entry.reset < nowSeconds) return true;
  const remaining = typeof entry.remaining === 'number' ? entry.remaining : 0;
  const total = typeof entry.total === 'number' && entry.total > 0 ? entry.total : 1;
  if (pass === 1) return remaining * 2 >= total;
  if (pass === 2) return remaining > 0;
  return pass === 3;
}
