// The least a two-limit policy can do with ratekit's memory layout and answer shape: the floor
// that the decisions part and the instruction counts (icount/subject.mjs) put beside ratekit's
// policy row. Not a limiter: no eviction, no options, one fixed policy written out inline.

const NEVER = 1e12;
const SECOND_MS = 1_000;
const HOUR_MS = 3_600_000;

/**
 * The decisions part's policy (GCRA, `NEVER` per second, and a fixed window, `NEVER` per hour)
 * on the memory store's layout: a Map from key to slot, the recency links in two Uint32Arrays,
 * one record of three numbers per key in a Float64Array (the TAT, the window's start and its
 * count), both limits' arithmetic inline, nothing written unless both admit. Each decision
 * returns core's Decision shape, kept reachable as a caller keeps it: that object, its `limits`
 * array and one 14-field entry per limit, the binding limit chosen as core chooses it (fewest
 * left, then the longest reset).
 *
 * @param {number} slotCount the most keys it holds (no eviction: more keys throw)
 * @returns {{ decide(key: string): boolean, size(): number }}
 */
export function policyFloor(slotCount) {
  const slots = new Map();
  const slab = new Float64Array(slotCount * 3);
  const older = new Uint32Array(slotCount);
  const newer = new Uint32Array(slotCount);
  let newest = 0;
  let kept;
  const T = SECOND_MS / NEVER;
  const tau = NEVER * T;
  const entry = (name, algorithm, allowed, windowMs, tokensBefore, tokensAfter, resetMs, nextRefillMs) => ({
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
  });
  const decide = (key) => {
    const nowMs = Date.now();
    let slot = slots.get(key);
    if (slot === undefined) {
      if (slots.size === slotCount) throw new Error(`the policy floor holds at most ${slotCount} keys`);
      slot = slots.size;
      slots.set(key, slot);
      slab[slot * 3] = nowMs;
      slab[slot * 3 + 1] = nowMs;
    } else if (slot !== newest) {
      newer[older[slot]] = newer[slot];
      older[newer[slot]] = older[slot];
      newer[newest] = slot;
      older[slot] = newest;
      newest = slot;
    }
    const at = slot * 3;
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
    const second = entry('second', 'gcra', gcraAllowed, SECOND_MS, tokens, tokens - 1, newTat - nowMs, Math.min(newTat - nowMs, T));
    const hour = entry('hour', 'fixed-window', windowAllowed, HOUR_MS, NEVER - used, NEVER - used - 1, startMs + HOUR_MS - nowMs, startMs + HOUR_MS - nowMs);
    const top = hour.remaining < second.remaining || (hour.remaining === second.remaining && hour.resetMs > second.resetMs) ? hour : second;
    kept = { allowed, limit: top.limit, remaining: top.remaining, resetMs: top.resetMs, retryAfterMs: 0, delayMs: 0, cost: 1, nowMs, policy: top.name, limits: [second, hour] };
    return kept.allowed;
  };
  return { decide, size: () => slots.size };
}
