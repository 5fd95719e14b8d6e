/**
 * A bounded map that evicts its least recently used key: the memory store's
 * index of keys, in place of `lru-cache`.
 *
 * Why not `lru-cache` (which the store used until issue 9): the store keeps
 * each key's state in a slab indexed by the key's slot, and `lru-cache` does
 * not expose a stable slot; that slab is what took a key from 153 to 114
 * bytes at 1M keys (`pnpm bench`, bytes). Its `get` also reads an options
 * object and checks staleness and background fetches this store never uses:
 * replacing it saved about 70 instructions per decision (fixed-window,
 * `bench/icount`) and 4 bytes per key. This class keeps only what the store
 * needs: a `Map` from key to slot, the keys and
 * values by slot, and the recency links in two `Uint32Array`s (16 bytes
 * per slot). They start small and double as keys arrive, up to
 * `capacity`, so a store with a large bound that holds few keys costs
 * little (a slot number never exceeds the number of keys held so far).
 *
 * - `get` marks the key most recently used; `peek` does not.
 * - `set` of a new key when full first evicts the least recently used key
 *   and hands it to `onEvict(value, key, slot)`, which runs before the new
 *   key is added (so `size` is still `capacity` then, and the slot still
 *   holds the evicted key).
 * - Not safe to change from inside `onEvict`.
 * - Each key has a slot, an integer `0 … capacity - 1` that stays its own
 *   until it is deleted or evicted: the slot methods (`find`, `valueAt`,
 *   `setValueAt`, `add`) let a caller keep data of its own per slot (the
 *   memory store's state slab) and skip repeated lookups.
 */
/** Slots allocated when an index is made; the arrays double from there. */
const INITIAL_SLOTS = 1_024;

export class LruIndex<V> {
  readonly capacity: number;
  readonly #slots = new Map<string, number>();
  #keys: Array<string | undefined>;
  #values: Array<V | undefined>;
  /** Slot of the next older / newer key. Meaningful only for slots in use. */
  #older: Uint32Array;
  #newer: Uint32Array;
  readonly #onEvict: (value: V, key: string, slot: number) => void;
  /** Slots given back by `delete`, reused first. */
  #free: number[] = [];
  /** Slots ever handed out: `0 … #used - 1`. */
  #used = 0;
  /** The least and the most recently used slots (when `size > 0`). */
  #oldest = 0;
  #newest = 0;

  /** @param capacity the most keys held, an integer ≥ 1 (the store validates it). */
  constructor(capacity: number, onEvict: (value: V, key: string, slot: number) => void) {
    this.capacity = capacity;
    const size = Math.min(capacity, INITIAL_SLOTS);
    this.#keys = new Array<string | undefined>(size).fill(undefined);
    this.#values = new Array<V | undefined>(size).fill(undefined);
    this.#older = new Uint32Array(size);
    this.#newer = new Uint32Array(size);
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** The value of `key`, now marked most recently used; undefined when absent. */
  get(key: string): V | undefined {
    const slot = this.find(key);
    return slot < 0 ? undefined : this.#values[slot];
  }

  /** The slot of `key`, now marked most recently used; -1 when absent. */
  find(key: string): number {
    const slot = this.#slots.get(key);
    if (slot === undefined) return -1;
    this.#touch(slot);
    return slot;
  }

  /** The slot of `key`, leaving its recency alone; -1 when absent. */
  slotOf(key: string): number {
    return this.#slots.get(key) ?? -1;
  }

  /** The value in a slot in use. */
  valueAt(slot: number): V {
    return this.#values[slot]!;
  }

  /** Replaces the value in a slot in use, leaving its recency alone. */
  setValueAt(slot: number, value: V): void {
    this.#values[slot] = value;
  }

  /** The value of `key`, leaving its recency alone; undefined when absent. */
  peek(key: string): V | undefined {
    const slot = this.#slots.get(key);
    return slot === undefined ? undefined : this.#values[slot];
  }

  /** Stores `value` under `key`, most recently used; evicts the least recently used key first when full. Returns the key's slot. */
  set(key: string, value: V): number {
    const known = this.#slots.get(key);
    if (known === undefined) return this.add(key, value);
    this.#values[known] = value;
    this.#touch(known);
    return known;
  }

  /** Adds `key`, which must be absent, as {@link set} does. Returns its slot. */
  add(key: string, value: V): number {
    let slot: number;
    if (this.#slots.size === this.capacity) slot = this.#evictOldest();
    else if (this.#free.length > 0) slot = this.#free.pop()!;
    else {
      slot = this.#used++;
      if (slot === this.#older.length) this.#grow();
    }
    this.#keys[slot] = key;
    this.#values[slot] = value;
    if (this.#slots.size === 0) this.#oldest = slot;
    else this.#link(slot);
    this.#newest = slot;
    this.#slots.set(key, slot);
    return slot;
  }

  /** Removes `key`; true when it was there. */
  delete(key: string): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#unlink(slot);
    this.#slots.delete(key);
    this.#keys[slot] = undefined;
    this.#values[slot] = undefined;
    this.#free.push(slot);
    return true;
  }

  /** The keys from the least to the most recently used. Do not change the index while iterating. */
  *rkeys(): IterableIterator<string> {
    let slot = this.#oldest;
    for (let left = this.#slots.size; left > 0; left--) {
      yield this.#keys[slot]!;
      slot = this.#newer[slot]!;
    }
  }

  /** The slots allocated so far: every slot handed out is below this. */
  get allocated(): number {
    return this.#older.length;
  }

  clear(): void {
    this.#slots.clear();
    this.#keys.fill(undefined);
    this.#values.fill(undefined);
    this.#free = [];
    this.#used = 0;
  }

  /** Doubles the slot arrays (up to `capacity`). */
  #grow(): void {
    const size = Math.min(this.capacity, this.#older.length * 2);
    const older = new Uint32Array(size);
    older.set(this.#older);
    this.#older = older;
    const newer = new Uint32Array(size);
    newer.set(this.#newer);
    this.#newer = newer;
    for (let slot = this.#keys.length; slot < size; slot++) {
      this.#keys.push(undefined);
      this.#values.push(undefined);
    }
  }

  /** Drops the least recently used key, tells `onEvict`, and returns its slot for reuse. */
  #evictOldest(): number {
    const slot = this.#oldest;
    const key = this.#keys[slot]!;
    const value = this.#values[slot]!;
    this.#onEvict(value, key, slot);
    this.#unlink(slot);
    this.#slots.delete(key);
    return slot;
  }

  /** Marks a slot in use most recently used. */
  #touch(slot: number): void {
    if (slot === this.#newest) return;
    this.#unlink(slot);
    this.#link(slot);
    this.#newest = slot;
  }

  /** Appends a slot after the newest one (the caller then makes it `#newest`). */
  #link(slot: number): void {
    this.#newer[this.#newest] = slot;
    this.#older[slot] = this.#newest;
  }

  /** Takes a slot in use out of the recency list. */
  #unlink(slot: number): void {
    if (this.#slots.size === 1) return;
    if (slot === this.#oldest) this.#oldest = this.#newer[slot]!;
    else this.#newer[this.#older[slot]!] = this.#newer[slot]!;
    if (slot === this.#newest) this.#newest = this.#older[slot]!;
    else this.#older[this.#newer[slot]!] = this.#older[slot]!;
  }
}
