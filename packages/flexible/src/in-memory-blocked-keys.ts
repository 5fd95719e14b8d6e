/**
 * The in-process refusal list behind `inMemoryBlockOnConsumed`: keys a store
 * limiter has seen reach the threshold, each with the epoch millisecond its
 * block ends. Until then `consume` refuses the key without calling the store
 * (rlf's `lib/component/BlockedKeys`).
 *
 * Why bounding it is safe: an entry only saves a store call. Forgetting one
 * early sends the key's next consume to the store, which still holds the
 * key's count and refuses it there. So when the list is full, the entry
 * that ends soonest-by-insertion (the oldest) is dropped: no limit is ever
 * loosened, and memory stays bounded. No timers: expired entries are removed
 * when read, and swept when the list grows (amortised, not on every add).
 *
 * The map is the `_keys` field, as in rlf, whose tests read it.
 *
 * @module
 */

/** The most keys held by default. */
export const DEFAULT_IN_MEMORY_BLOCKED_KEYS = 100_000;

/** Blocked keys and when each block ends (epoch ms). */
export class InMemoryBlockedKeys {
  /** Key → the epoch millisecond its block ends. */
  readonly _keys = new Map<string, number>();
  readonly maxKeys: number;
  readonly #now: () => number;
  /** Sweep expired entries when the size passes this (rlf sweeps past 999). */
  #sweepAt = 1000;

  /**
   * @param maxKeys - the most keys held; the oldest entry goes beyond it
   * @param now - the clock, epoch milliseconds (tests pass a fixed one)
   */
  constructor(maxKeys = DEFAULT_IN_MEMORY_BLOCKED_KEYS, now: () => number = Date.now) {
    this.maxKeys = maxKeys;
    this.#now = now;
  }

  /** Blocks `key` for `sec` seconds from now. */
  add(key: string, sec: number, nowMs = this.#now()): void {
    this.addMs(key, sec * 1000, nowMs);
  }

  /** Blocks `key` for `ms` milliseconds from now. */
  addMs(key: string, ms: number, nowMs = this.#now()): void {
    this._keys.delete(key); // re-inserted last: the oldest entry is the first
    this._keys.set(key, nowMs + ms);
    if (this._keys.size > this.#sweepAt) {
      this.collectExpired(nowMs);
      this.#sweepAt = Math.max(1000, this._keys.size * 2);
    }
    while (this._keys.size > this.maxKeys) {
      const oldest = this._keys.keys().next().value as string;
      this._keys.delete(oldest);
    }
  }

  /** Milliseconds before `key`'s block ends; 0 when it is not blocked. */
  msBeforeExpire(key: string, nowMs = this.#now()): number {
    const expire = this._keys.get(key);
    if (expire === undefined) return 0;
    if (expire >= nowMs) return expire - nowMs;
    this._keys.delete(key);
    return 0;
  }

  /** Removes every entry whose block has ended. */
  collectExpired(nowMs = this.#now()): void {
    for (const [key, expire] of this._keys) if (expire <= nowMs) this._keys.delete(key);
  }

  /** Unblocks `key`, or every key when none is given. */
  delete(key?: string): void {
    if (key === undefined) this._keys.clear();
    else this._keys.delete(key);
  }

  get size(): number {
    return this._keys.size;
  }
}
