/**
 * Where keys evicted from the memory store's LRU go when their state must
 * not be lost: a key that is refused, or nearly so. Without this, a flood of
 * `maxKeys` new keys (a botnet, an IPv6 range) would push a refused key out
 * of the LRU, and its next request would start from a fresh budget.
 *
 * Eviction order, closest-to-fresh first:
 * 1. expired or full state: dropped when the LRU evicts it (it is worth
 *    nothing: a fresh state is the same);
 * 2. state with at least half its budget left: dropped likewise (a fresh
 *    state differs from it by less than half a budget);
 * 3. state with less than half its budget left is kept here, in three
 *    levels (< 50 %, < 25 %, none left), each in least-recently-evicted
 *    order; when this is full, the entry with the most budget left goes,
 *    the oldest of its level first.
 *
 * So a flood cannot reset a refused key unless each of its own keys also
 * spends its whole budget, and it needs `capacity` such keys: a flood of
 * one-request keys never can.
 */
export class GuardedKeys<V> {
  /** Keys by level: 0 none left, 1 < 25 % left, 2 < 50 % left; each Map in insertion order. */
  readonly #levels: [Map<string, V>, Map<string, V>, Map<string, V>] = [new Map<string, V>(), new Map<string, V>(), new Map<string, V>()];
  readonly #levelOf = new Map<string, 0 | 1 | 2>();
  readonly capacity: number;

  /** @param capacity - the most keys held here (on top of the LRU's `maxKeys`) */
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.#levelOf.size;
  }

  /**
   * Keeps an evicted key when `budgetLeft` (its share of budget left, 0–1)
   * is under half; otherwise it is dropped.
   * @returns the key dropped to make room, if any
   */
  keep(key: string, value: V, budgetLeft: number): string | undefined {
    if (!(budgetLeft < 0.5)) return undefined;
    const level = budgetLeft <= 0 ? 0 : budgetLeft < 0.25 ? 1 : 2;
    this.delete(key);
    let dropped: string | undefined;
    if (this.#levelOf.size >= this.capacity) {
      dropped = this.#oldestWithMostBudget(level);
      if (dropped === undefined) return key; // everything held is closer to refused than this key
      this.delete(dropped);
    }
    this.#levels[level].set(key, value);
    this.#levelOf.set(key, level);
    return dropped;
  }

  has(key: string): boolean {
    return this.#levelOf.has(key);
  }

  /** Removes and returns a held key's value (to put it back in the LRU). */
  take(key: string): V | undefined {
    const level = this.#levelOf.get(key);
    if (level === undefined) return undefined;
    const value = this.#levels[level].get(key);
    this.delete(key);
    return value;
  }

  delete(key: string): boolean {
    const level = this.#levelOf.get(key);
    if (level === undefined) return false;
    this.#levels[level].delete(key);
    this.#levelOf.delete(key);
    return true;
  }

  /** Every held key and value. */
  *entries(): IterableIterator<[string, V]> {
    for (const level of this.#levels) yield* level;
  }

  clear(): void {
    for (const level of this.#levels) level.clear();
    this.#levelOf.clear();
  }

  /** The first-held key of the level with the most budget left, if that level is at or above `than`. */
  #oldestWithMostBudget(than: 0 | 1 | 2): string | undefined {
    for (let level = 2; level >= than; level--) {
      const first = this.#levels[level as 0 | 1 | 2].keys().next();
      if (!first.done) return first.value;
    }
    return undefined;
  }
}
