/**
 * The memory store: its key table (the LRU index, the state slab, the keys kept aside) and the
 * dispatch of each decision, kept in one closure because every decision runs through it. The rest
 * is one concept per file: what a key holds (`entry.ts`), which slot a limit takes
 * (`limit-slots.ts`), a policy packed in a slab (`packed-policy.ts`), expiry and the prune walk
 * (`expiry.ts`), eviction (`eviction.ts`, `lru.ts`), the options (`memory-options.ts`) and the
 * limiter's direct path (`direct-consume.ts`).
 *
 * @module
 */
import { algorithmOf as algorithmNamed } from '../algorithms/index.js';
import type { Algorithm, LimitState } from '../algorithms/types.js';
import { type Decision, decideOne, decisionOf } from '../decision.js';
import type { ResolvedLimit } from '../limit.js';
import { evaluateLimit, evaluatePolicy, UNCHANGED } from '../policy.js';
import { memoryEvictChannel } from '../events.js';
import { setMemoryConsume } from './direct-consume.js';
import { copyOut, type Entry, type Held, isSlots, readSlot, SLAB_STRIDE, type Slots, workingArrays, writeSlot } from './entry.js';
import { GuardedKeys } from './eviction.js';
import { budgetLeft, expired, pruneExpired } from './expiry.js';
import { LimitSlots } from './limit-slots.js';
import { LruIndex } from './lru.js';
import { type MemoryStoreOptions, resolveMemoryStoreOptions } from './memory-options.js';
import { admitPacked, packable, PackedRecords } from './packed-policy.js';
import type { EvaluateRequest, RateLimitStore } from './types.js';

export type { MemoryStoreOptions } from './memory-options.js';

const STORE_NAME = 'memory';

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
  const { maxKeys, pruneIntervalMs } = resolveMemoryStoreOptions(options);

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
    if (!expired(entry, limitSlots, clock.nowMs)) guarded.keep(key, entry, budgetLeft(entry, limitSlots, clock.nowMs));
    if (memoryEvictChannel.hasSubscribers) memoryEvictChannel.publish({ key, keptAside: guarded.has(key), size: cache.size + guarded.size });
  });
  // Which slot of a key's entry each limit takes (limit-slots.ts); keys that only ever see the
  // primary slot keep their state bare, without a Slots wrapper.
  const limitSlots = new LimitSlots();

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
    if (held < 0) return pack.read(slot, -1 - held);
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

  // The packed policy (packed-policy.ts): its limits, records and slab, fields read on the policy's hot path.
  const pack = new PackedRecords();
  // The last policy (and namespace) judged for packing: one that did not qualify is not judged again on each call.
  let judgedLimits: readonly ResolvedLimit[] | undefined;
  let judgedNamespace = '';

  /** Makes `limits` the packed policy when none is yet and it qualifies (see PackedRecords). */
  function choosePacked(namespace: string, limits: readonly ResolvedLimit[]): void {
    judgedLimits = limits;
    judgedNamespace = namespace;
    if (!packable(limits)) return;
    const ids = limitSlots.slotIdsOf(namespace, limits);
    if (ids[0] === undefined) pack.adopt(namespace, limits, ids, cache.allocated);
  }

  /** Puts a Slots entry in a slot in use: packed when it holds exactly the packed policy's states, else as it is. */
  function holdSlots(slot: number, slots: Slots): void {
    const code = pack.codeOf(slots);
    if (code < 0) {
      cache.setValueAt(slot, slots);
      return;
    }
    pack.write(slot, slots, cache.allocated);
    cache.setValueAt(slot, -1 - code);
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
    if (
      (typeof held === 'number' ? held > 0 : held === undefined || Array.isArray(held)) &&
      ((limit === limitSlots.primaryLimit && namespace === limitSlots.primaryNamespace) || limitSlots.isPrimary(namespace, limit))
    ) {
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
    if (pack.limits === undefined && (limits !== judgedLimits || namespace !== judgedNamespace)) choosePacked(namespace, limits);
    clock.nowMs = nowMs;
    const slot = locate(key);
    const held = slot < 0 ? undefined : cache.valueAt(slot);
    if (limits === pack.limits && namespace === pack.namespace && typeof held === 'number' && held < 0) {
      const entries = admitPacked(pack.slab, slot * pack.stride, -1 - held, pack.policy!, limits, cost, nowMs);
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
      const id = limitSlots.slotOf(namespace, limit);
      const { decision, write: state } = evaluateLimit(readSlot(entry, id), limit, request.cost, mode, request.nowMs);
      if (state !== UNCHANGED) commit(key, slot, writeSlot(entry, id, state));
      return decision;
    }
    const ids = limitSlots.slotIdsOf(namespace, limits);
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

  /** Drops expired keys (expiry.ts): from the LRU's least recently used end, and those kept aside. */
  function prune(nowMs: number = Date.now()): number {
    return pruneExpired(pruneTarget, guarded, limitSlots, nowMs);
  }
  const pruneTarget = {
    rkeys: () => cache.rkeys(),
    entryOf: (key: string) => {
      const slot = cache.slotOf(key);
      return entryOf(slot, cache.valueAt(slot));
    },
    delete: (key: string) => cache.delete(key),
  };

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
      for (const limit of limitSlots.knownLimits(namespace)) next = writeSlot(next, limitSlots.slotOf(namespace, limit), undefined);
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
  setMemoryConsume(store, consume);
  return store;
}
