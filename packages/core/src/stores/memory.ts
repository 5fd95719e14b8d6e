import { delay } from '../algorithms/delay.js';
import { fixedWindow } from '../algorithms/fixed-window.js';
import { gcra } from '../algorithms/gcra.js';
import { algorithmOf as algorithmNamed } from '../algorithms/index.js';
import { slidingWindow } from '../algorithms/sliding-window.js';
import { EPSILON } from '../algorithms/tolerance.js';
import { tokenBucket } from '../algorithms/token-bucket.js';
import type { Algorithm, LimitState } from '../algorithms/types.js';
import { type Decision, decideOne, decisionOf, type LimitDecision } from '../decision.js';
import type { AlgorithmName, ResolvedLimit } from '../limit.js';
import { evaluateLimit, evaluatePolicy, stepLimit, UNCHANGED } from '../policy.js';
import { assertInteger, assertNonNegative } from '../validate.js';
import { memoryEvictChannel } from '../events.js';
import { GuardedKeys } from './eviction.js';
import { LruIndex } from './lru.js';
import type { EvaluateRequest, RateLimitStore } from './types.js';

const STORE_NAME = 'memory';

/** Options of {@link memoryStore}. */
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
   * or after each interval prunes before it decides (see {@link memoryStore}).
   * No timer: a store made at module scope, as a Cloudflare Worker makes it,
   * starts nothing. 0 disables it (expired keys are then only reclaimed by
   * LRU eviction, which is lossless for them).
   * @default 60_000
   */
  pruneIntervalMs?: number;
}

/** The in-memory store, with `prune()` for tests and manual sweeps. */
export interface MemoryStore extends RateLimitStore {
  /** Synchronous: the in-memory path never returns a Promise. */
  evaluate(request: EvaluateRequest): Decision;
  resetKey(key: string, namespace: string): void;
  /** Drops expired keys from the least recently used end. Returns how many were dropped. */
  prune(nowMs?: number): number;
  /** How many keys are held (in the LRU and kept aside). */
  readonly size: number;
  dispose(): void;
}

/**
 * Keys whose state belongs to more than one limit (several limits in a
 * policy, or several limiters sharing the store) keep their extra states
 * here, as a flat `[slotId, state, slotId, state, …]` list: a key rarely has
 * more than a few, and a list costs far less memory than a Map per key.
 */
class Slots {
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

type Entry = LimitState | Slots;

/**
 * The most numbers of a state kept in the slab: every algorithm's state but
 * a sliding log's (a fixed window, token bucket, GCRA or delay state with a
 * block, a sliding window without). 24 bytes per slot.
 */
const SLAB_STRIDE = 3;

/**
 * What the LRU holds for a key: an {@link Entry}; or a number: ≥ 0, the
 * length of a bare state kept in the slab at the key's slot; < 0, a record
 * of the packed policy's states kept in the policy slab (`-1 - code`, the
 * code holding each state's length in 2 bits, limit 0 lowest).
 */
type Held = Entry | number;

/**
 * True when the entry is a {@link Slots} wrapper. A bare state is always an
 * array, so this is `Array.isArray`, a map check in optimised code. Not
 * `instanceof Slots`: V8 does not fold that for a class held in a closure,
 * and it cost about 200 instructions per decision (a generic InstanceOf,
 * with its Symbol.hasInstance lookup), a third of the whole decision.
 */
function isSlots(entry: Entry | undefined): entry is Slots {
  return entry !== undefined && !Array.isArray(entry);
}

/**
 * Working arrays for a state of 1 to {@link SLAB_STRIDE} numbers (index =
 * length; index 0 is unused: an empty state takes the general path). Made
 * with fractional numbers so that they hold unboxed doubles from the start,
 * all of one elements kind (an empty literal would be another, and make
 * every element access in the steps polymorphic).
 */
function workingArrays(): number[][] {
  return [[0.5], [0.5], [0.5, 0.5], [0.5, 0.5, 0.5]];
}

/** The most limits of a policy whose states a key keeps packed (2 bits of state length per limit in a small integer). */
const MAX_PACKED_LIMITS = 8;

/**
 * The most numbers a limit's state takes in a packed policy record: its
 * length without a block (a sliding log: as many hits as the slab takes).
 * A state that does not fit is never packed, so this only sizes records.
 */
function stateRoom(algorithm: AlgorithmName): number {
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

/** A new array of the `length` numbers of `from` at `at`. */
function copyOut(from: Float64Array, at: number, length: number): number[] {
  const state = new Array<number>(length);
  for (let i = 0; i < length; i++) state[i] = from[at + i]!;
  return state;
}

/** `evaluate` in mode `'consume'`, the request's fields as arguments. */
export type ConsumeFunction = (key: string, namespace: string, limits: readonly ResolvedLimit[], cost: number, nowMs: number) => Decision;

/**
 * Each memory store's `consume` (see the store's `consume` below), by store
 * object: a limiter built on the store itself takes it, and one built on a
 * copy or a wrapper (`{ ...memoryStore(), evaluate }`) does not, so a
 * wrapped `evaluate` is never bypassed.
 */
const consumers = new WeakMap<RateLimitStore, ConsumeFunction>();

/** The fast `consume` of a store made by {@link memoryStore}; undefined for any other store. For the limiter. */
export function memoryConsumeOf(store: RateLimitStore): ConsumeFunction | undefined {
  return consumers.get(store);
}

/**
 * What {@link admitPacked} needs of the store's packed policy (see `memoryStore`), made once
 * when the policy is chosen.
 */
interface PackedPolicy {
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
 * Steps every limit of a packed policy record (see `memoryStore`'s packed policy) for an
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
function admitPacked(record: Float64Array, at: number, code: number, packed: PackedPolicy, limits: readonly ResolvedLimit[], cost: number, nowMs: number): LimitDecision[] | undefined {
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

/**
 * An in-process store on an LRU index (`stores/lru.ts`), bounded by `maxKeys`.
 *
 * - Decisions are synchronous: read, decide and write happen with no `await`
 *   in between, so multi-limit policies are atomic without locks.
 * - No timer at all, so the store runs unchanged on Node, Bun, Deno and
 *   Cloudflare Workers (which refuse a timer at module scope). Expired state
 *   is treated as absent when read (every algorithm's state expires
 *   losslessly), and the first decision at or after every `pruneIntervalMs`
 *   of the caller's clock first prunes expired keys from the least recently
 *   used end. The bound on memory is `maxKeys` (the LRU), not pruning: an
 *   idle store is not pruned, but gains no keys either. A prune walks the
 *   expired keys and stops after 1,000 live ones, so it costs the decision
 *   that runs it about what the timer's sweep cost the event loop.
 * - Memory: a key used by one limit keeps its state (up to 3 numbers,
 *   `SLAB_STRIDE`) in a `Float64Array` slab indexed by the
 *   key's LRU slot, so it costs no object at all (the slab and the index
 *   start small and double as keys arrive, up to `maxKeys`). A key of the
 *   store's first policy of several limits (none with a block) keeps its
 *   states the same way, packed in a second slab (1 to 3 numbers per limit).
 *   Longer states (a sliding log of several entries, a blocked sliding
 *   window) and the states of keys used by several limiters are kept as
 *   arrays. See `pnpm bench` for bytes per key.
 * - The user-controlled key is never concatenated with anything, so it cannot
 *   collide with another limiter's namespace.
 * - A limiter built on the store itself decides a `consume` on a direct
 *   path with the same answers (no request object; for the packed policy,
 *   no per-limit arrays either); a limiter built
 *   on a copy or wrapper of it (`{ ...store, evaluate: logged }`) sends every
 *   call through that wrapper's `evaluate`.
 *
 * @throws {RateKitOptionError} when `maxKeys` is not an integer ≥ 1 or `pruneIntervalMs` is negative.
 * @example
 * ```ts
 * const limiter = createLimiter({ limits: { limit: 100, windowMs: 60_000 }, store: memoryStore({ maxKeys: 50_000 }) });
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys ?? 100_000;
  assertInteger('maxKeys', maxKeys, 1);
  const pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  assertNonNegative('pruneIntervalMs', pruneIntervalMs, ' of milliseconds');

  // The clock of the decision being made, for judging what the LRU evicts during it.
  // An object field, not a closure variable: V8 boxes a double written to a
  // closure variable (a heap number per decision), and updates a double field in place.
  // `pruneAtMs`: the first decision at or after it prunes first (see pruneDue); -Infinity: the
  // store's first decision (the interval starts at the caller's first time), Infinity: never.
  const clock = { nowMs: 0, pruneAtMs: pruneIntervalMs > 0 ? -Infinity : Infinity };
  const guarded = new GuardedKeys<Entry>(Math.ceil(maxKeys / 10));
  // Grows with the index (LruIndex.allocated), up to maxKeys * SLAB_STRIDE numbers.
  let slab = new Float64Array(0);
  const cache: LruIndex<Held> = new LruIndex<Held>(maxKeys, (held, key, slot) => {
    const entry = entryOf(slot, held);
    if (!expired(entry, clock.nowMs)) guarded.keep(key, entry, budgetLeft(entry, clock.nowMs));
    if (memoryEvictChannel.hasSubscribers) memoryEvictChannel.publish({ key, keptAside: guarded.has(key), size: cache.size + guarded.size });
  });
  // The first (namespace, limit id) the store sees is its primary slot: keys
  // that only ever see it store their state bare, without a Slots wrapper.
  let primaryNamespace: string | undefined;
  let primaryId: string | undefined;
  // The last limit seen for each slot, so prune() can compute TTLs.
  const limitsBySlot = new Map<string, ResolvedLimit>();
  let primaryLimit: ResolvedLimit | undefined;

  function isPrimary(namespace: string, limit: ResolvedLimit): boolean {
    if (primaryId === undefined) {
      primaryNamespace = namespace;
      primaryId = limit.id;
    }
    if (limit.id === primaryId && namespace === primaryNamespace) {
      primaryLimit = limit;
      return true;
    }
    return false;
  }

  // Slot ids by limit, built once per (limit, namespace) rather than per decision.
  const slotIds = new WeakMap<ResolvedLimit, { namespace: string; id: string }>();
  function slotId(namespace: string, limit: ResolvedLimit): string {
    const known = slotIds.get(limit);
    if (known !== undefined && known.namespace === namespace) return known.id;
    const id = `${namespace}\u0000${limit.id}`;
    slotIds.set(limit, { namespace, id });
    limitsBySlot.set(id, limit);
    return id;
  }

  /** A limit's slot under `namespace`: undefined for the primary slot, else its slot id. */
  function slotOf(namespace: string, limit: ResolvedLimit): string | undefined {
    return isPrimary(namespace, limit) ? undefined : slotId(namespace, limit);
  }

  // The slot ids of the last policy seen (undefined for the primary slot): a
  // limiter passes the same limits array on every call, so a policy's
  // decision looks its slot ids up once, not twice per limit in a WeakMap.
  let idsLimits: readonly ResolvedLimit[] | undefined;
  let idsNamespace = '';
  let ids: Array<string | undefined> = [];
  function slotIdsOf(namespace: string, limits: readonly ResolvedLimit[]): ReadonlyArray<string | undefined> {
    if (limits === idsLimits && namespace === idsNamespace && ids.length === limits.length) return ids;
    const found = limits.map((limit) => slotOf(namespace, limit));
    idsLimits = limits;
    idsNamespace = namespace;
    ids = found;
    return found;
  }

  /** One slot's state in an entry (`id` undefined: the primary slot). */
  function readSlot(entry: Entry | undefined, id: string | undefined): LimitState | undefined {
    if (entry === undefined) return undefined;
    if (isSlots(entry)) return id === undefined ? entry.primary : entry.get(id);
    return id === undefined ? entry : undefined;
  }

  /** Writes one slot (`id` undefined: the primary slot); returns the entry to keep under the key (undefined: nothing left). */
  function writeSlot(entry: Entry | undefined, id: string | undefined, state: LimitState | undefined): Entry | undefined {
    if (id === undefined && !isSlots(entry)) return state;
    const slots = isSlots(entry) ? entry : new Slots(entry);
    if (id === undefined) slots.primary = state;
    else slots.set(id, state);
    return slots.empty ? undefined : slots;
  }

  // The algorithm of the last limit seen: a limiter passes the same limit
  // object every time, so one cached pair per store answers almost always,
  // for one comparison (less than algorithmNamed's string comparisons).
  let lastLimit: ResolvedLimit | undefined;
  let lastAlgorithm: Algorithm | undefined;
  function algorithmOf(limit: ResolvedLimit): Algorithm {
    if (limit !== lastLimit) {
      lastAlgorithm = algorithmNamed(limit.algorithm);
      lastLimit = limit;
    }
    return lastAlgorithm!;
  }

  /** The entry a slot holds: a slab state is copied out into a new array, a packed policy record into a new Slots. */
  function entryOf(slot: number, held: Held): Entry {
    if (typeof held !== 'number') return held;
    if (held < 0) return unpack(slot, -1 - held);
    return copyOut(slab, slot * SLAB_STRIDE, held);
  }

  /** Puts `entry` in a slot in use: a short bare state into the slab, anything else as it is. */
  function hold(slot: number, entry: Entry): void {
    if (isSlots(entry)) {
      holdSlots(slot, entry);
      return;
    }
    if (entry.length > SLAB_STRIDE) {
      cache.setValueAt(slot, entry);
      return;
    }
    // Unrolled (and below): a loop here cost about 200 instructions per decision.
    const n = entry.length;
    const at = slot * SLAB_STRIDE;
    if (at >= slab.length) growSlab();
    if (n > 0) {
      slab[at] = entry[0]!;
      if (n > 1) {
        slab[at + 1] = entry[1]!;
        if (n > 2) slab[at + 2] = entry[2]!;
      }
    }
    cache.setValueAt(slot, n);
  }

  /** Sizes the slab to the index's slots. */
  function growSlab(): void {
    const grown = new Float64Array(cache.allocated * SLAB_STRIDE);
    grown.set(slab);
    slab = grown;
  }

  /** Stores `entry` under `key` (most recently used) and returns its slot; undefined deletes the key (-1). */
  function put(key: string, entry: Entry | undefined): number {
    if (entry === undefined) {
      cache.delete(key);
      return -1;
    }
    const slot = cache.set(key, 0);
    hold(slot, entry);
    return slot;
  }

  /** Moves a key kept aside back into the LRU. Returns its slot, or -1 when it was not kept aside. */
  function rescue(key: string): number {
    const entry = guarded.take(key);
    return entry === undefined ? -1 : put(key, entry);
  }

  // The packed policy: the first policy of several limits (at most MAX_PACKED_LIMITS, none with a
  // block) that the direct path sees with its first limit in the store's primary slot. A key whose
  // Slots hold exactly that policy's states, each of 1 to its limit's room (stateRoom) numbers,
  // keeps them in `packSlab` instead, one record of packStride numbers at the key's slot (limit i
  // at packOffsets[i]), and the LRU holds -1 - (the states' lengths, 2 bits per limit). Set once,
  // like the primary slot.
  let packLimits: readonly ResolvedLimit[] | undefined;
  let packNamespace = '';
  /** The packed policy's slot ids (index 0, the primary slot: undefined). */
  let packIds: ReadonlyArray<string | undefined> = [];
  let packOffsets: number[] = [];
  let packed: PackedPolicy | undefined;
  let packStride = 0;
  let packSlab = new Float64Array(0);
  // The last policy (and namespace) judged for packing: one that did not qualify is not judged again on each call.
  let judgedLimits: readonly ResolvedLimit[] | undefined;
  let judgedNamespace = '';

  /** Makes `limits` the packed policy when none is yet and it qualifies (see above). */
  function choosePacked(namespace: string, limits: readonly ResolvedLimit[]): void {
    judgedLimits = limits;
    judgedNamespace = namespace;
    const n = limits.length;
    if (n > MAX_PACKED_LIMITS || limits.some((limit) => limit.blockDurationMs !== 0)) return;
    const ids = slotIdsOf(namespace, limits);
    if (ids[0] !== undefined) return;
    packLimits = limits;
    packNamespace = namespace;
    packIds = [...ids];
    const lengths = limits.map((limit) => stateRoom(limit.algorithm));
    packOffsets = [0];
    for (const length of lengths) packOffsets.push(packOffsets[packOffsets.length - 1]! + length);
    packStride = packOffsets[n]!;
    packSlab = new Float64Array(cache.allocated * packStride);
    // Working arrays of each state's length, made from literals so that they all hold unboxed doubles (see workingArrays).
    packed = {
      offsets: packOffsets,
      code: lengths.reduce((code, length, i) => code | (length << (2 * i)), 0),
      before: lengths.map((length) => workingArrays()[length]!),
      after: lengths.map((length) => workingArrays()[length]!),
    };
  }

  /** The lengths code of `slots` when they hold exactly the packed policy's states, each of 1 to its limit's room; else -1. */
  function packCodeOf(slots: Slots): number {
    const n = packIds.length;
    if (n === 0 || slots.others.length !== 2 * (n - 1)) return -1;
    let code = 0;
    for (let i = 0; i < n; i++) {
      const state = i === 0 ? slots.primary : slots.get(packIds[i]!);
      if (state === undefined || state.length < 1 || state.length > packOffsets[i + 1]! - packOffsets[i]!) return -1;
      code |= state.length << (2 * i);
    }
    return code;
  }

  /** Puts a Slots entry in a slot in use: packed when it holds exactly the packed policy's states, else as it is. */
  function holdSlots(slot: number, slots: Slots): void {
    const code = packCodeOf(slots);
    if (code < 0) {
      cache.setValueAt(slot, slots);
      return;
    }
    const at = slot * packStride;
    if (at >= packSlab.length) {
      const grown = new Float64Array(cache.allocated * packStride);
      grown.set(packSlab);
      packSlab = grown;
    }
    for (let i = 0; i < packIds.length; i++) {
      const state = i === 0 ? slots.primary! : slots.get(packIds[i]!)!;
      for (let j = 0; j < state.length; j++) packSlab[at + packOffsets[i]! + j] = state[j]!;
    }
    cache.setValueAt(slot, -1 - code);
  }

  /** The Slots of a packed record (`code`: the states' lengths, 2 bits per limit). */
  function unpack(slot: number, code: number): Slots {
    const at = slot * packStride;
    const slots = new Slots(copyOut(packSlab, at, code & 3));
    const others = new Array<string | LimitState>(2 * (packIds.length - 1));
    for (let i = 1; i < packIds.length; i++) {
      others[2 * i - 2] = packIds[i]!;
      others[2 * i - 1] = copyOut(packSlab, at + packOffsets[i]!, (code >> (2 * i)) & 3);
    }
    slots.others = others;
    return slots;
  }

  // Working arrays for a slab state of each length on the hot path: the
  // state is copied in, stepped in place (`into`), and copied back.
  const working = workingArrays();

  /**
   * `evaluate` in mode `'consume'`. The commonest call, an admitted consume
   * of a key under a single limit without a block, is decided here with no
   * new array and no request object: a slab state is copied into a working
   * array, stepped in place (the `into` argument) and copied back; a longer
   * bare state is stepped in place; a new key's state is added. A policy of
   * several limits goes to {@link consumePolicy}. Everything else goes to
   * `evaluate`. Kept in a function of its own, too large for V8
   * to inline into the limiter (over 460 bytes of bytecode), so it keeps its
   * own inlining budget for the LRU lookup, the step and the decision: inlined
   * into the caller, the step and the decision were not, and their objects
   * were then really allocated.
   */
  function consume(key: string, namespace: string, limits: readonly ResolvedLimit[], cost: number, nowMs: number): Decision {
    if (nowMs >= clock.pruneAtMs) pruneDue(nowMs);
    if (limits.length !== 1) return consumePolicy(key, namespace, limits, cost, nowMs);
    const limit = limits[0]!;
    if (limit.blockDurationMs !== 0) return evaluate({ key, namespace, limits, cost, mode: 'consume', nowMs });
    clock.nowMs = nowMs;
    // `locate`, `isPrimary` and `algorithmOf`, each with its usual answer written out first: V8
    // counts every function it inlines here against this function's budget, which the step needs.
    let slot = cache.find(key);
    if (slot < 0 && guarded.size > 0) slot = rescue(key);
    const held = slot < 0 ? undefined : cache.valueAt(slot);
    if ((typeof held === 'number' ? held > 0 : held === undefined || Array.isArray(held)) && ((limit === primaryLimit && namespace === primaryNamespace) || isPrimary(namespace, limit))) {
      let state = held as number[] | undefined;
      const at = slot * SLAB_STRIDE;
      if (typeof held === 'number') {
        state = working[held]!;
        state[0] = slab[at]!;
        if (held > 1) {
          state[1] = slab[at + 1]!;
          if (held > 2) state[2] = slab[at + 2]!;
        }
      }
      const step = (limit === lastLimit ? lastAlgorithm! : algorithmOf(limit)).step(state, limit, cost, nowMs, state);
      if (step.allowed) {
        const next = step.next;
        // A state stepped in place needs nothing more when the LRU holds the array itself (a long
        // sliding log); keeping `hold` off the usual path also keeps it out of this function's
        // inlining budget, which the step needs.
        if (next !== state) hold(slot < 0 ? cache.add(key, 0) : slot, next);
        else if (typeof held === 'number') {
          // Stepped in the working array: back into the slot's place in the slab. Written out, not
          // hold(): calling hold here cost 180-200 instructions per decision (icount, fixed-window,
          // gcra and sliding-window at 1 key), as it no longer fits this function's inlining budget.
          slab[at] = next[0]!;
          if (held > 1) {
            slab[at + 1] = next[1]!;
            if (held > 2) slab[at + 2] = next[2]!;
          }
        }
        return decideOne(limit, step, undefined, true, cost, nowMs);
      }
    }
    // Nothing changed since the lookup (a refused step writes nothing): the key is still at `slot`.
    return evaluateAt({ key, namespace, limits, cost, mode: 'consume', nowMs }, slot);
  }

  /**
   * `consume` for a policy of several limits. The commonest call, a key of
   * the packed policy (see `choosePacked`) that every limit admits, is
   * decided by {@link admitPacked}, without a request object, the per-limit
   * state and write arrays of {@link evaluatePolicy}, or new state arrays;
   * the lookup and the decision stay here, outside its inlining budget.
   * Anything else (a new key, another policy, a long state, a refusal, a
   * delay, a block) goes to the general path, which decides it from the
   * record as it was (admitPacked puts back what it wrote).
   */
  function consumePolicy(key: string, namespace: string, limits: readonly ResolvedLimit[], cost: number, nowMs: number): Decision {
    if (packLimits === undefined && (limits !== judgedLimits || namespace !== judgedNamespace)) choosePacked(namespace, limits);
    clock.nowMs = nowMs;
    const slot = locate(key);
    const held = slot < 0 ? undefined : cache.valueAt(slot);
    if (limits === packLimits && namespace === packNamespace && typeof held === 'number' && held < 0) {
      const entries = admitPacked(packSlab, slot * packStride, -1 - held, packed!, limits, cost, nowMs);
      if (entries !== undefined) return decisionOf(entries, true, 0, cost, nowMs);
    }
    // Nothing changed since the lookup (admitPacked leaves the record as it found it unless every limit admits): the key is still at `slot`.
    return evaluateAt({ key, namespace, limits, cost, mode: 'consume', nowMs }, slot);
  }

  /** The slot of `key`, now most recently used (a key kept aside moved back into the LRU); -1 when absent. */
  function locate(key: string): number {
    const slot = cache.find(key);
    return slot < 0 && guarded.size > 0 ? rescue(key) : slot;
  }

  function evaluate(request: EvaluateRequest): Decision {
    if (request.nowMs >= clock.pruneAtMs) pruneDue(request.nowMs);
    clock.nowMs = request.nowMs;
    return evaluateAt(request, locate(request.key));
  }

  /** Every case, on the key's entry at `slot` (-1: the key is new); `consume` decides the commonest first. */
  function evaluateAt(request: EvaluateRequest, slot: number): Decision {
    const { key, limits, mode, namespace } = request;
    const entry = slot < 0 ? undefined : entryOf(slot, cache.valueAt(slot));
    if (limits.length === 1 && mode !== 'refund') {
      // One limit: no per-limit arrays.
      const limit = limits[0]!;
      const id = slotOf(namespace, limit);
      const { decision, write: state } = evaluateLimit(readSlot(entry, id), limit, request.cost, mode, request.nowMs);
      if (state !== UNCHANGED) commit(key, slot, writeSlot(entry, id, state));
      return decision;
    }
    const ids = slotIdsOf(namespace, limits);
    const n = limits.length;
    const states = new Array<LimitState | undefined>(n);
    for (let i = 0; i < n; i++) states[i] = readSlot(entry, ids[i]);
    const { decision, writes } = evaluatePolicy(states, limits, request.cost, mode, request.nowMs);
    let next = entry;
    let changed = false;
    for (let i = 0; i < n; i++) {
      const state = writes[i];
      if (state === UNCHANGED) continue;
      next = writeSlot(next, ids[i], state);
      changed = true;
    }
    if (changed) commit(key, slot, next);
    return decision;
  }

  /** Stores `next` under `key`, whose slot is `slot` (-1: not held); undefined deletes it. */
  function commit(key: string, slot: number, next: Entry | undefined): void {
    if (next === undefined) {
      if (slot >= 0) cache.delete(key);
    } else if (slot >= 0) hold(slot, next);
    else put(key, next);
  }

  /** The share (0–1) of budget a key has left at `atMs`: the least over its limits. */
  function budgetLeft(entry: Entry, atMs: number): number {
    const left = (state: LimitState | undefined, limit: ResolvedLimit | undefined) => {
      if (state === undefined || limit === undefined) return 1;
      const step = stepLimit(state, limit, 0, atMs); // a blocked key has nothing left
      return step.tokensAfter / step.capacity;
    };
    if (!isSlots(entry)) return left(entry, primaryLimit);
    let least = left(entry.primary, primaryLimit);
    for (let i = 0; i < entry.others.length; i += 2) least = Math.min(least, left(entry.others[i + 1] as LimitState, limitsBySlot.get(entry.others[i] as string)));
    return least;
  }

  function expired(entry: Entry, nowMs: number): boolean {
    const live = (state: LimitState | undefined, limit: ResolvedLimit | undefined) => state !== undefined && limit !== undefined && algorithmNamed(limit.algorithm).ttlMs(state, limit, nowMs) > 0;
    if (!isSlots(entry)) return !live(entry, primaryLimit);
    if (live(entry.primary, primaryLimit)) return false;
    for (let i = 0; i < entry.others.length; i += 2) {
      if (live(entry.others[i + 1] as LimitState, limitsBySlot.get(entry.others[i] as string))) return false;
    }
    return true;
  }

  function prune(nowMs: number = Date.now()): number {
    // Walk from the least recently used end; stop once a run of live keys
    // suggests the rest is live too, so a sweep stays short on big stores.
    let dropped = 0;
    let liveRun = 0;
    const doomed: string[] = [];
    for (const key of cache.rkeys()) {
      const slot = cache.slotOf(key);
      if (expired(entryOf(slot, cache.valueAt(slot)), nowMs)) {
        doomed.push(key);
        liveRun = 0;
      } else if (++liveRun >= 1_000) break;
    }
    for (const key of doomed) if (cache.delete(key)) dropped++;
    const doomedAside: string[] = [];
    for (const [key, entry] of guarded.entries()) if (expired(entry, nowMs)) doomedAside.push(key);
    for (const key of doomedAside) if (guarded.delete(key)) dropped++;
    return dropped;
  }

  /** The amortised prune: called by the first decision at or after `clock.pruneAtMs`, before it looks its key up. */
  function pruneDue(nowMs: number): void {
    clock.pruneAtMs = nowMs + pruneIntervalMs;
    prune(nowMs);
  }

  const store: MemoryStore = {
    name: STORE_NAME,
    shared: false,
    clock: 'caller',
    evaluate,
    resetKey(key, namespace) {
      const slot = locate(key);
      if (slot < 0) return;
      let next: Entry | undefined = entryOf(slot, cache.valueAt(slot));
      for (const limit of knownLimits(namespace)) next = writeSlot(next, slotOf(namespace, limit), undefined);
      commit(key, slot, next);
    },
    prune,
    get size() {
      return cache.size + guarded.size;
    },
    dispose() {
      cache.clear();
      guarded.clear();
    },
  };
  consumers.set(store, consume);
  return store;

  /** Every limit this store has seen in `namespace`. */
  function knownLimits(namespace: string): ResolvedLimit[] {
    const found: ResolvedLimit[] = [];
    if (primaryLimit !== undefined && primaryNamespace === namespace) found.push(primaryLimit);
    for (const [id, limit] of limitsBySlot) if (id.startsWith(`${namespace}\u0000`)) found.push(limit);
    return found;
  }
}
