import type { Algorithm, LimitState, Step } from './types.js';
import { ttlWithBlock } from './block.js';
import { EPSILON } from './tolerance.js';

/**
 * Sliding log: remembers when each admitted unit arrived and admits `cost`
 * when the units of the last `windowMs` plus `cost` do not exceed `limit`.
 * Exact: no window of `windowMs` ever holds more than `limit` units.
 *
 * Pro: exact, no boundary effect.
 * Con: memory grows with the limit: at most `limit` entries per key when
 * costs are whole units (entries of one millisecond are merged; a cost below
 * 1 can add an entry for less than a unit), so keep it for small limits.
 *
 * State: `[t₁, c₁, t₂, c₂, …]`, arrival times (ms) and costs, oldest first,
 * only entries still inside the window.
 */
export const slidingLog: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const live = prune(state, nowMs - limit.windowMs);
    const used = sumCosts(live);
    const stored = live === state ? used : sumCosts(state);
    const allowed = used + cost <= limit.limit + EPSILON;
    const next = cost > 0 ? append(live, nowMs, cost, allowed ? into : undefined) : live;
    const oldest = next.length > 0 ? next[0]! : undefined;
    const newest = next.length > 0 ? next[next.length - 2]! : undefined;
    return {
      allowed,
      next,
      nextIfRefused: undefined,
      capacity: limit.limit,
      tokensBefore: limit.limit - stored,
      tokensRefilled: stored - used,
      tokensAfter: limit.limit - used - cost,
      resetMs: newest === undefined ? 0 : newest + limit.windowMs - nowMs,
      retryAfterMs: allowed ? 0 : retryAfter(live, used, cost, limit.limit, limit.windowMs, nowMs),
      nextRefillMs: oldest === undefined ? 0 : oldest + limit.windowMs - nowMs,
      delayMs: 0,
    };
  },

  refund(state, limit, cost, nowMs): LimitState | undefined {
    const live = prune(state, nowMs - limit.windowMs).slice();
    let owed = cost;
    // Give back the newest units first: they would have expired last.
    while (owed > 0 && live.length > 0) {
      const c = live[live.length - 1]!;
      if (c > owed) {
        live[live.length - 1] = c - owed;
        owed = 0;
      } else {
        live.length -= 2;
        owed -= c;
      }
    }
    return live;
  },

  ttlMs(state, limit, nowMs) {
    const n = state.length - (state.length & 1);
    return ttlWithBlock(state, 'sliding-log', n === 0 ? 0 : state[n - 2]! + limit.windowMs - nowMs, nowMs);
  },
};

/**
 * The entries that arrived after `cutoffMs`. Does not mutate; returns `state`
 * itself when nothing is dropped, and {@link NO_ENTRIES} when nothing is left.
 * A trailing odd number (a block, see `block.ts`) is not an entry: it is left out.
 */
function prune(state: LimitState | undefined, cutoffMs: number): LimitState {
  if (state === undefined) return NO_ENTRIES;
  const n = state.length - (state.length & 1);
  let i = 0;
  while (i < n && state[i]! <= cutoffMs) i += 2;
  if (i === n) return NO_ENTRIES;
  return i === 0 && n === state.length ? state : state.slice(i, n);
}

/** The log with no entry, shared: never written (`append` writes only into an `into` of the result's length, at least 2). */
const NO_ENTRIES: LimitState = [];

function sumCosts(state: LimitState | undefined): number {
  let sum = 0;
  if (state !== undefined) for (let i = 1; i < state.length; i += 2) sum += state[i]!;
  return sum;
}

/**
 * `log` with `cost` added at `nowMs`, merged into the last entry when it has the same time: written
 * into `into` when it is given with the length of the result (it may be `log` itself), otherwise
 * a new array.
 */
function append(log: LimitState, nowMs: number, cost: number, into: number[] | undefined): LimitState {
  const n = log.length;
  const merge = n > 0 && log[n - 2] === nowMs;
  if (into !== undefined && into.length === (merge ? n : n + 2)) {
    if (into !== log) for (let i = 0; i < n; i++) into[i] = log[i]!;
    if (merge) into[n - 1] = log[n - 1]! + cost;
    else {
      into[n] = nowMs;
      into[n + 1] = cost;
    }
    return into;
  }
  if (merge) {
    const merged = log.slice();
    merged[n - 1]! += cost;
    return merged;
  }
  // Sized exactly: `slice()` then `push()` would leave spare capacity in every stored log.
  const next = new Array<number>(n + 2);
  for (let i = 0; i < n; i++) next[i] = log[i]!;
  next[n] = nowMs;
  next[n + 1] = cost;
  return next;
}

/** Ms until enough of the oldest entries have left the window for `cost` to fit. */
function retryAfter(live: LimitState, used: number, cost: number, limit: number, windowMs: number, nowMs: number): number {
  if (cost > limit + EPSILON) return Infinity;
  let remaining = used;
  for (let i = 0; i < live.length; i += 2) {
    remaining -= live[i + 1]!;
    if (remaining + cost <= limit + EPSILON) return live[i]! + windowMs - nowMs;
  }
  return 0;
}
