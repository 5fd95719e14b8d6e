// Floors: the least a limiter with ratekit's memory layout and answer shape can do, written out
// inline, for the decisions part's floor row and the instruction counts (icount/subject.mjs).
// Not limiters: no eviction, no options, one fixed limit or policy each.

const NEVER = 1e12;
const SECOND_MS = 1_000;
const HOUR_MS = 3_600_000;

/**
 * The memory store's key index without eviction: a Map from key to slot and the recency links in
 * two Uint32Arrays, updated on every lookup as the store's LRU updates them.
 *
 * @param {number} slotCount the most keys it holds (more throw)
 * @returns {{ slotOf(key: string): number, size(): number }} `slotOf` gives the key's slot, now the
 *   most recent; a key seen for the first time gets a new slot. Slots are never reused, so a
 *   floor's zero-filled record at a new slot reads as no state (a window that started at 0, a TAT
 *   of 0: both already past).
 */
function recencyIndex(slotCount) {
  const slots = new Map();
  const older = new Uint32Array(slotCount);
  const newer = new Uint32Array(slotCount);
  let newest = 0;
  const slotOf = (key) => {
    const slot = slots.get(key);
    if (slot === undefined) {
      if (slots.size === slotCount) throw new Error(`this floor holds at most ${slotCount} keys`);
      const added = slots.size;
      slots.set(key, added);
      return added;
    }
    if (slot !== newest) {
      newer[older[slot]] = newer[slot];
      older[newer[slot]] = older[slot];
      newer[newest] = slot;
      older[slot] = newest;
      newest = slot;
    }
    return slot;
  };
  return { slotOf, size: () => slots.size };
}

/** One limit's entry of core's `Decision`, for a limit of `NEVER` charged 1. */
function entryOf(name, algorithm, allowed, windowMs, tokensBefore, tokensAfter, resetMs, nextRefillMs) {
  return {
    name,
    algorithm,
    allowed,
    limit: NEVER,
    quota: NEVER,
    windowMs,
    remaining: Math.max(0, Math.floor(tokensAfter)),
    tokensBefore,
    tokensRefilled: 0,
    tokensPaid: 1,
    tokensAfter,
    resetMs,
    retryAfterMs: 0,
    nextRefillMs,
  };
}

/** The top level of core's `Decision` (an admitted one), over `limits`, bound by `top`. */
function decisionOf(allowed, top, nowMs, limits) {
  return { allowed, limit: NEVER, remaining: top.remaining, resetMs: top.resetMs, retryAfterMs: 0, delayMs: 0, cost: 1, nowMs, policy: top.name, limits };
}

/**
 * A fixed window of `NEVER` per hour on the memory store's layout: {@link recencyIndex} and the
 * state, `[windowStartMs, used]`, in a Float64Array at the key's slot, the arithmetic inline.
 * `answer` is what each decision returns: `'boolean'`, only whether it is allowed; `'decision'`,
 * also a new 10-field object, as a Decision-returning API must (without the per-limit entry and
 * its array); `'entry'`, core's `Decision` shape, that object with its `limits` array and the one
 * limit's 14-field entry. Objects are kept reachable, as a caller keeps a decision (else V8
 * removes them altogether).
 *
 * @param {number} slotCount the most keys it holds
 * @param {'boolean' | 'decision' | 'entry'} answer
 * @returns {{ decide(key: string): boolean, size(): number }}
 */
export function fixedWindowFloor(slotCount, answer) {
  const index = recencyIndex(slotCount);
  const slab = new Float64Array(slotCount * 2);
  let kept;
  const decide = (key) => {
    const nowMs = Date.now();
    const at = index.slotOf(key) * 2;
    let startMs = slab[at];
    let used = slab[at + 1];
    if (nowMs >= startMs + HOUR_MS) {
      startMs = nowMs;
      used = 0;
    }
    const allowed = used + 1 <= NEVER;
    if (allowed) {
      slab[at] = startMs;
      slab[at + 1] = used + 1;
    }
    if (answer === 'boolean') return allowed;
    const resetMs = startMs + HOUR_MS - nowMs;
    if (answer === 'decision') {
      kept = decisionOf(allowed, { remaining: Math.floor(NEVER - used - 1), resetMs, name: '' }, nowMs, undefined);
    } else {
      const entry = entryOf('', 'fixed-window', allowed, HOUR_MS, NEVER - used, NEVER - used - 1, resetMs, resetMs);
      kept = decisionOf(allowed, entry, nowMs, [entry]);
    }
    return kept.allowed;
  };
  return { decide, size: index.size };
}

/**
 * The decisions part's policy (GCRA, `NEVER` per second, and a fixed window, `NEVER` per hour)
 * on the memory store's layout: {@link recencyIndex} and one record of three numbers per key in a
 * Float64Array (the TAT, the window's start and its count), both limits' arithmetic inline,
 * nothing written unless both admit. Each decision returns core's `Decision` shape, kept
 * reachable: that object, its `limits` array and one 14-field entry per limit, the binding limit
 * chosen as core chooses it (fewest left, then the longest reset).
 *
 * @param {number} slotCount the most keys it holds
 * @returns {{ decide(key: string): boolean, size(): number }}
 */
export function policyFloor(slotCount) {
  const index = recencyIndex(slotCount);
  const slab = new Float64Array(slotCount * 3);
  const T = SECOND_MS / NEVER;
  const tau = NEVER * T;
  let kept;
  const decide = (key) => {
    const nowMs = Date.now();
    const at = index.slotOf(key) * 3;
    const tat = Math.max(slab[at], nowMs);
    const newTat = tat + T;
    const gcraAllowed = newTat - nowMs <= tau;
    const tokens = NEVER - (tat - nowMs) / T;
    let startMs = slab[at + 1];
    let used = slab[at + 2];
    if (nowMs >= startMs + HOUR_MS) {
      startMs = nowMs;
      used = 0;
    }
    const windowAllowed = used + 1 <= NEVER;
    const allowed = gcraAllowed && windowAllowed;
    if (allowed) {
      slab[at] = newTat;
      slab[at + 1] = startMs;
      slab[at + 2] = used + 1;
    }
    const second = entryOf('second', 'gcra', gcraAllowed, SECOND_MS, tokens, tokens - 1, newTat - nowMs, Math.min(newTat - nowMs, T));
    const hourResetMs = startMs + HOUR_MS - nowMs;
    const hour = entryOf('hour', 'fixed-window', windowAllowed, HOUR_MS, NEVER - used, NEVER - used - 1, hourResetMs, hourResetMs);
    const top = hour.remaining < second.remaining || (hour.remaining === second.remaining && hour.resetMs > second.resetMs) ? hour : second;
    kept = decisionOf(allowed, top, nowMs, [second, hour]);
    return kept.allowed;
  };
  return { decide, size: index.size };
}
