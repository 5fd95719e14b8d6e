/**
 * The memory store's packed policy (see {@link PackedRecords}): the states of the first policy of
 * several limits a store sees, kept per key in a `Float64Array` record rather than in arrays, and
 * {@link admitPacked}, which steps a record for an admitted consume without a new array.
 *
 * @module
 */
import { delay } from '../algorithms/delay.js';
import { fixedWindow } from '../algorithms/fixed-window.js';
import { gcra } from '../algorithms/gcra.js';
import { slidingWindow } from '../algorithms/sliding-window.js';
import { EPSILON } from '../algorithms/tolerance.js';
import { tokenBucket } from '../algorithms/token-bucket.js';
import type { LimitState } from '../algorithms/types.js';
import type { LimitDecision } from '../decision.js';
import type { AlgorithmName, ResolvedLimit } from '../limit.js';
import { copyOut, SLAB_STRIDE, Slots, workingArrays } from './entry.js';

/** The most limits of a policy whose states a key keeps packed (2 bits of state length per limit in a small integer). */
export const MAX_PACKED_LIMITS = 8;

/**
 * The most numbers a limit's state takes in a packed policy record: its
 * length without a block (a sliding log: as many hits as the slab takes).
 * A state that does not fit is never packed, so this only sizes records.
 */
export function stateRoom(algorithm: AlgorithmName): number {
  switch (algorithm) {
    case 'gcra':
    case 'delay':
      return 1;
    case 'fixed-window':
    case 'token-bucket':
      return 2;
    default:
      return SLAB_STRIDE;
  }
}

/**
 * What {@link admitPacked} needs of the store's packed policy (see {@link PackedRecords}), made once
 * when the policy is chosen.
 */
export interface PackedPolicy {
  /** Where limit `i`'s state starts in a record. */
  readonly offsets: readonly number[];
  /**
   * The lengths code of a record whose every state has its algorithm's own length
   * ({@link stateRoom}), 2 bits per limit: the only records stepped here. Any other (a shorter
   * state, a sliding log) goes to the general path.
   */
  readonly code: number;
  /** Per limit, a working array of its state's length: the state as read from the record. */
  readonly before: number[][];
  /** Per limit, a working array of the same length: the state its step writes (`into`). */
  readonly after: number[][];
}

/** Writes the states of limits `0 … count - 1` back into the record from `packed.before`, as they were read. */
function restorePacked(record: Float64Array, at: number, packed: PackedPolicy, count: number): undefined {
  for (let i = 0; i < count; i++) {
    const before = packed.before[i]!;
    const from = at + packed.offsets[i]!;
    for (let j = 0; j < before.length; j++) record[from + j] = before[j]!;
  }
  return undefined;
}

/**
 * Steps every limit of a packed policy record (see {@link PackedRecords}) for an
 * admitted consume, and returns the limits' entries. Limit `i`'s state, at `record[at +
 * offsets[i]]`, is copied into `before[i]`, stepped into `after[i]` and written back at once.
 * When a limit refuses, delays or does not step in place, the states already written are put
 * back from `before` (so the record is as it was) and the result is undefined, for the general
 * path to decide.
 *
 * Its shape is measured (bench/notes/instruction-counts.md). Over 460 bytes of bytecode, it
 * is never inlined, so V8 optimises it on its own, with its inlining budget (920 bytes on Node
 * 20) left for the steps of the algorithms a process uses. Each step is called in a branch of its
 * own and its `Step` destructured there, so V8 removes the object, and the entry is one literal
 * built from plain numbers. Each branch copies its algorithm's own number of values in and out,
 * and each state goes back into the record as soon as it is stepped: copying the states back in
 * a loop once every limit had admitted, each of a length read from the record's code, cost about
 * 160 instructions per two-limit decision.
 */
export function admitPacked(record: Float64Array, at: number, code: number, packed: PackedPolicy, limits: readonly ResolvedLimit[], cost: number, nowMs: number): LimitDecision[] | undefined {
  if (code !== packed.code) return undefined;
  const { offsets, before, after } = packed;
  const n = limits.length;
  const entries = new Array<LimitDecision>(n);
  for (let i = 0; i < n; i++) {
    const limit = limits[i]!;
    const from = at + offsets[i]!;
    const state = before[i]!;
    const into = after[i]!;
    let allowed: boolean, next: LimitState, capacity: number, tokensBefore: number, tokensRefilled: number, tokensAfter: number, resetMs: number, nextRefillMs: number, delayMs: number;
    // One branch per algorithm, each destructuring its own Step (see above). A sliding log, whose
    // length changes as entries come and go, takes the general path.
    switch (limit.algorithm) {
      case 'fixed-window':
        state[0] = record[from]!;
        state[1] = record[from + 1]!;
        ({ allowed, next, capacity, tokensBefore, tokensRefilled, tokensAfter, resetMs, nextRefillMs, delayMs } = fixedWindow.step(state, limit, cost, nowMs, into));
        record[from] = into[0]!;
        record[from + 1] = into[1]!;
        break;
      case 'gcra':
        state[0] = record[from]!;
        ({ allowed, next, capacity, tokensBefore, tokensRefilled, tokensAfter, resetMs, nextRefillMs, delayMs } = gcra.step(state, limit, cost, nowMs, into));
        record[from] = into[0]!;
        break;
      case 'token-bucket':
        state[0] = record[from]!;
        state[1] = record[from + 1]!;
        ({ allowed, next, capacity, tokensBefore, tokensRefilled, tokensAfter, resetMs, nextRefillMs, delayMs } = tokenBucket.step(state, limit, cost, nowMs, into));
        record[from] = into[0]!;
        record[from + 1] = into[1]!;
        break;
      case 'sliding-window':
        state[0] = record[from]!;
        state[1] = record[from + 1]!;
        state[2] = record[from + 2]!;
        ({ allowed, next, capacity, tokensBefore, tokensRefilled, tokensAfter, resetMs, nextRefillMs, delayMs } = slidingWindow.step(state, limit, cost, nowMs, into));
        record[from] = into[0]!;
        record[from + 1] = into[1]!;
        record[from + 2] = into[2]!;
        break;
      case 'delay':
        state[0] = record[from]!;
        ({ allowed, next, capacity, tokensBefore, tokensRefilled, tokensAfter, resetMs, nextRefillMs, delayMs } = delay.step(state, limit, cost, nowMs, into));
        record[from] = into[0]!;
        break;
      default:
        return restorePacked(record, at, packed, i);
    }
    // `into` holds this step's state only when it admitted in place; whatever was written, put it all back.
    if (!allowed || delayMs !== 0 || next !== into) return restorePacked(record, at, packed, i + 1);
    // limitDecision's entry for an admitted step, written out (see above).
    entries[i] = {
      name: limit.name,
      algorithm: limit.algorithm,
      allowed: true,
      limit: capacity,
      quota: limit.limit,
      windowMs: limit.windowMs,
      remaining: Math.max(0, Math.floor(tokensAfter + EPSILON)),
      tokensBefore,
      tokensRefilled,
      tokensPaid: cost,
      tokensAfter,
      resetMs,
      retryAfterMs: 0,
      nextRefillMs,
    };
  }
  return entries;
}

/** True when a policy of `limits` can be packed: at most {@link MAX_PACKED_LIMITS} limits, none with a block. */
export function packable(limits: readonly ResolvedLimit[]): boolean {
  return limits.length <= MAX_PACKED_LIMITS && !limits.some((limit) => limit.blockDurationMs !== 0);
}

/**
 * One memory store's packed policy: the first policy of several limits ({@link packable}) that
 * its direct path sees with its first limit in the store's primary slot. A key whose Slots hold
 * exactly that policy's states, each of 1 to its limit's room ({@link stateRoom}) numbers, keeps
 * them in {@link PackedRecords.slab} instead, one record of `stride` numbers at the key's slot
 * (limit i at `offsets[i]`), and the LRU holds -1 - (the states' lengths, 2 bits per limit). Set
 * once, like the primary slot.
 *
 * The store reads `limits`, `namespace`, `slab`, `stride` and `policy` on its hot path: fields of
 * one object, as the closure variables they were (icount: the same instructions per decision).
 */
export class PackedRecords {
  /** The packed policy's limits; undefined until one is chosen. */
  limits: readonly ResolvedLimit[] | undefined = undefined;
  namespace = '';
  /** The packed policy's slot ids (index 0, the primary slot: undefined). */
  ids: ReadonlyArray<string | undefined> = [];
  offsets: number[] = [];
  policy: PackedPolicy | undefined = undefined;
  /** Numbers per record. */
  stride = 0;
  /** The records, by the key's LRU slot; grown with the index. */
  slab = new Float64Array(0);

  /**
   * Makes `limits` the packed policy, with `ids` its slot ids (the first undefined: the primary
   * slot) and `allocated` the index's slots. The caller checks {@link packable} first.
   */
  adopt(namespace: string, limits: readonly ResolvedLimit[], ids: ReadonlyArray<string | undefined>, allocated: number): void {
    this.limits = limits;
    this.namespace = namespace;
    this.ids = [...ids];
    const lengths = limits.map((limit) => stateRoom(limit.algorithm));
    const offsets = [0];
    for (const length of lengths) offsets.push(offsets[offsets.length - 1]! + length);
    this.offsets = offsets;
    this.stride = offsets[limits.length]!;
    this.slab = new Float64Array(allocated * this.stride);
    // Working arrays of each state's length, made from literals so that they all hold unboxed doubles (see workingArrays).
    this.policy = {
      offsets,
      code: lengths.reduce((code, length, i) => code | (length << (2 * i)), 0),
      before: lengths.map((length) => workingArrays()[length]!),
      after: lengths.map((length) => workingArrays()[length]!),
    };
  }

  /** The lengths code of `slots` when they hold exactly the packed policy's states, each of 1 to its limit's room; else -1. */
  codeOf(slots: Slots): number {
    const { ids, offsets } = this;
    const n = ids.length;
    if (n === 0 || slots.others.length !== 2 * (n - 1)) return -1;
    let code = 0;
    for (let i = 0; i < n; i++) {
      const state = i === 0 ? slots.primary : slots.get(ids[i]!);
      if (state === undefined || state.length < 1 || state.length > offsets[i + 1]! - offsets[i]!) return -1;
      code |= state.length << (2 * i);
    }
    return code;
  }

  /** Writes the states of `slots` (whose {@link codeOf} is ≥ 0) into `slot`'s record, growing the slab to `allocated` slots when it is short. */
  write(slot: number, slots: Slots, allocated: number): void {
    const { ids, offsets, stride } = this;
    const at = slot * stride;
    if (at >= this.slab.length) {
      const grown = new Float64Array(allocated * stride);
      grown.set(this.slab);
      this.slab = grown;
    }
    const slab = this.slab;
    for (let i = 0; i < ids.length; i++) {
      const state = i === 0 ? slots.primary! : slots.get(ids[i]!)!;
      for (let j = 0; j < state.length; j++) slab[at + offsets[i]! + j] = state[j]!;
    }
  }

  /** The Slots of `slot`'s record (`code`: the states' lengths, 2 bits per limit). */
  read(slot: number, code: number): Slots {
    const { ids, offsets, slab } = this;
    const at = slot * this.stride;
    const slots = new Slots(copyOut(slab, at, code & 3));
    const others = new Array<string | LimitState>(2 * (ids.length - 1));
    for (let i = 1; i < ids.length; i++) {
      others[2 * i - 2] = ids[i]!;
      others[2 * i - 1] = copyOut(slab, at + offsets[i]!, (code >> (2 * i)) & 3);
    }
    slots.others = others;
    return slots;
  }
}
