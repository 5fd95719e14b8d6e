import { type Algorithm, type LimitState, nextState3, type Step } from './types.js';
import { ttlWithBlock } from './block.js';
import { EPSILON } from './tolerance.js';

/**
 * Sliding-window counter (Cloudflare, "How we built rate limiting capable of
 * scaling to millions of domains", 2017): windows are aligned to multiples of
 * `windowMs` since the epoch, and the count used is the current window's
 * count plus the previous window's count weighted by the share of it that the
 * sliding window still covers:
 *
 *     estimate = previous × (windowMs − elapsed) / windowMs + current
 *
 * A request of `cost` is admitted when `estimate + cost ≤ limit`.
 *
 * Pro: two counters, no boundary burst of 2 × limit, cheap on every store.
 * Con: approximate; assumes the previous window's traffic was uniform.
 *
 * State: `[windowStartMs, previousCount, currentCount]`.
 */
export const slidingWindow: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const W = limit.windowMs;
    const startMs = Math.floor(nowMs / W) * W;
    const previous = previousCount(state, startMs, W);
    const current = currentCount(state, startMs);
    const elapsed = nowMs - startMs;
    const estimate = (previous * (W - elapsed)) / W + current;
    const allowed = estimate + cost <= limit.limit + EPSILON;
    const storedUsed = state === undefined ? 0 : state[1]! + state[2]!;
    const total = current + cost;
    return {
      allowed,
      next: nextState3(into, allowed, startMs, previous, total),
      nextIfRefused: undefined,
      capacity: limit.limit,
      tokensBefore: limit.limit - storedUsed,
      tokensRefilled: storedUsed - estimate,
      tokensAfter: limit.limit - estimate - cost,
      resetMs: total > 0 ? startMs + 2 * W - nowMs : previous > 0 ? startMs + W - nowMs : 0,
      retryAfterMs: allowed ? 0 : retryAfter(previous, current, cost, limit.limit, W, elapsed),
      nextRefillMs: previous > 0 ? Math.min(W / previous, W - elapsed) : total > 0 ? W - elapsed : 0,
      delayMs: 0,
    };
  },

  refund(state, limit, cost, nowMs): LimitState | undefined {
    if (state === undefined) return state;
    const W = limit.windowMs;
    const startMs = Math.floor(nowMs / W) * W;
    return [startMs, previousCount(state, startMs, W), Math.max(0, currentCount(state, startMs) - cost)];
  },

  ttlMs(state, limit, nowMs) {
    return ttlWithBlock(state, 'sliding-window', state[0]! + 2 * limit.windowMs - nowMs, nowMs);
  },
};

/**
 * The previous window's count as seen from window `startMs`, rolling the
 * stored state forward: the stored previous count if the state is of this
 * window, its current count if it is of the window before, else 0.
 * (Two functions rather than one returning a pair: this is the hot path.)
 */
function previousCount(state: LimitState | undefined, startMs: number, W: number): number {
  if (state === undefined) return 0;
  if (state[0] === startMs) return state[1]!;
  return state[0] === startMs - W ? state[2]! : 0;
}

/** The current window's count at window `startMs`: the stored one if the state is of this window, else 0. */
function currentCount(state: LimitState | undefined, startMs: number): number {
  return state !== undefined && state[0] === startMs ? state[2]! : 0;
}

/**
 * Ms until `cost` fits: within this window the previous count's weight decays
 * linearly; failing that, in the next window the current count becomes the
 * previous one and decays in turn.
 */
function retryAfter(previous: number, current: number, cost: number, limit: number, W: number, elapsed: number): number {
  if (cost > limit + EPSILON) return Infinity;
  const room = limit - current - cost;
  if (room >= -EPSILON && previous > 0) {
    // previous × (W − e) / W ≤ room  ⇔  e ≥ W × (1 − room / previous)
    return Math.max(0, W * (1 - room / previous) - elapsed);
  }
  // Next window: current becomes previous; need current × (W − e) / W + cost ≤ limit.
  const untilNext = W - elapsed;
  if (current <= 0) return untilNext;
  return untilNext + Math.max(0, W * (1 - (limit - cost) / current));
}
