import { type Algorithm, type LimitState, nextState2, type Step } from './types.js';
import { ttlWithBlock } from './block.js';
import { EPSILON } from './tolerance.js';

/**
 * Fixed window: at most `limit` units per window of `windowMs`. A key's window
 * starts at its first hit (as in express-rate-limit and rate-limiter-flexible),
 * so resets are spread over time instead of all landing on the same instant.
 *
 * Pro: one counter, exact within a window, cheapest on every store.
 * Con: up to 2 × `limit` can pass across a window boundary.
 *
 * State: `[windowStartMs, used]`.
 */
export const fixedWindow: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const expired = state === undefined || nowMs >= state[0]! + limit.windowMs;
    const startMs = expired ? nowMs : state[0]!;
    const used = expired ? 0 : state[1]!;
    const stored = state === undefined ? 0 : state[1]!;
    const available = limit.limit - used;
    const allowed = cost <= available + EPSILON;
    const after = available - cost;
    const endMs = startMs + limit.windowMs;
    const busy = used + cost > 0;
    return {
      allowed,
      next: nextState2(into, allowed, startMs, used + cost),
      nextIfRefused: undefined,
      capacity: limit.limit,
      tokensBefore: limit.limit - stored,
      tokensRefilled: stored - used,
      tokensAfter: after,
      resetMs: busy ? endMs - nowMs : 0,
      retryAfterMs: allowed ? 0 : cost > limit.limit + EPSILON ? Infinity : endMs - nowMs,
      nextRefillMs: busy ? endMs - nowMs : 0,
      delayMs: 0,
    };
  },

  refund(state, limit, cost, nowMs): LimitState | undefined {
    if (state === undefined || nowMs >= state[0]! + limit.windowMs) return state;
    return [state[0]!, Math.max(0, state[1]! - cost)];
  },

  ttlMs(state, limit, nowMs) {
    return ttlWithBlock(state, 'fixed-window', state[0]! + limit.windowMs - nowMs, nowMs);
  },
};
