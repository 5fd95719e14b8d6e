/**
 * What the memory store keeps per key (see `memory.ts`): a bare state, a {@link Slots} wrapper of
 * several limits' states, or, in the LRU itself, a number standing for a state kept in a slab.
 * Plain functions and one small class, no store state: moved out of the store's closure, they
 * cost nothing (the build bundles them into the same module).
 *
 * @module
 */
import type { LimitState } from '../algorithms/types.js';

/**
 * Keys whose state belongs to more than one limit (several limits in a
 * policy, or several limiters sharing the store) keep their extra states
 * here, as a flat `[slotId, state, slotId, state, …]` list: a key rarely has
 * more than a few, and a list costs far less memory than a Map per key.
 */
export class Slots {
  primary: LimitState | undefined;
  /** Exactly as long as its content: an array grown by assignment would reserve 17 slots for 2. */
  others: Array<string | LimitState> = [];
  constructor(primary: LimitState | undefined) {
    this.primary = primary;
  }

  get(id: string): LimitState | undefined {
    for (let i = 0; i < this.others.length; i += 2) if (this.others[i] === id) return this.others[i + 1] as LimitState;
    return undefined;
  }

  set(id: string, state: LimitState | undefined): void {
    const others = this.others;
    let i = 0;
    while (i < others.length && others[i] !== id) i += 2;
    if (state === undefined) {
      if (i < others.length) others.splice(i, 2);
    } else if (i < others.length) others[i + 1] = state;
    else this.others = others.length === 0 ? [id, state] : [...others, id, state];
  }

  get empty(): boolean {
    return this.primary === undefined && this.others.length === 0;
  }
}

/** A key's state: bare (one limit, the store's primary slot) or wrapped. */
export type Entry = LimitState | Slots;

/**
 * The most numbers of a state kept in the slab: every algorithm's state but
 * a sliding log's (a fixed window, token bucket, GCRA or delay state with a
 * block, a sliding window without). 24 bytes per slot.
 */
export const SLAB_STRIDE = 3;

/**
 * What the LRU holds for a key: an {@link Entry}; or a number: ≥ 0, the
 * length of a bare state kept in the slab at the key's slot; < 0, a record
 * of the packed policy's states kept in the policy slab (`-1 - code`, the
 * code holding each state's length in 2 bits, limit 0 lowest).
 */
export type Held = Entry | number;

/**
 * True when the entry is a {@link Slots} wrapper. A bare state is always an
 * array, so this is `Array.isArray`, a map check in optimised code. Not
 * `instanceof Slots`: V8 does not fold that for a class held in a closure,
 * and it cost about 200 instructions per decision (a generic InstanceOf,
 * with its Symbol.hasInstance lookup), a third of the whole decision.
 */
export function isSlots(entry: Entry | undefined): entry is Slots {
  return entry !== undefined && !Array.isArray(entry);
}

/**
 * Working arrays for a state of 1 to {@link SLAB_STRIDE} numbers (index =
 * length; index 0 is unused: an empty state takes the general path). Made
 * with fractional numbers so that they hold unboxed doubles from the start,
 * all of one elements kind (an empty literal would be another, and make
 * every element access in the steps polymorphic).
 */
export function workingArrays(): number[][] {
  return [[0.5], [0.5], [0.5, 0.5], [0.5, 0.5, 0.5]];
}

/** A new array of the `length` numbers of `from` at `at`. */
export function copyOut(from: Float64Array, at: number, length: number): number[] {
  const state = new Array<number>(length);
  for (let i = 0; i < length; i++) state[i] = from[at + i]!;
  return state;
}

/** One slot's state in an entry (`id` undefined: the primary slot). */
export function readSlot(entry: Entry | undefined, id: string | undefined): LimitState | undefined {
  if (entry === undefined) return undefined;
  if (isSlots(entry)) return id === undefined ? entry.primary : entry.get(id);
  return id === undefined ? entry : undefined;
}

/** Writes one slot (`id` undefined: the primary slot); returns the entry to keep under the key (undefined: nothing left). */
export function writeSlot(entry: Entry | undefined, id: string | undefined, state: LimitState | undefined): Entry | undefined {
  if (id === undefined && !isSlots(entry)) return state;
  const slots = isSlots(entry) ? entry : new Slots(entry);
  if (id === undefined) slots.primary = state;
  else slots.set(id, state);
  return slots.empty ? undefined : slots;
}
