import { ttlWithBlock } from './block.js';
import { advanceTat, refundTat } from './theoretical-arrival.js';
import { EPSILON } from './tolerance.js';
import { type Algorithm, nextState1, type Step } from './types.js';

/**
 * Delay mode, the leaky bucket as a queue: requests leave at the emission
 * interval `T = windowMs / limit`. A request over the rate is not refused but
 * admitted with a delay (`delayMs`) to wait before serving it, as long as that
 * delay is at most `maxDelayMs`; beyond that it is refused.
 *
 * State is the wait-until time (the TAT of {@link gcra}). The delay of a
 * request of `cost` is `max(0, max(tat, now) + cost × T − burst × T − now)`.
 * With `refusedPenaltyCapMs` set, refused requests still push the wait-until
 * time forward, but never past `now + refusedPenaltyCapMs` (the "wait-until"
 * recipe, Hvass-Labs/Code-Recipes); otherwise a refusal changes nothing.
 * A refusal's `retryAfterMs` counts from the state it leaves (penalty
 * included), so a client that retries then is admitted.
 *
 * Pro: smooths traffic instead of failing it; good for outbound throttling.
 * Con: held requests keep their connection open while they wait.
 *
 * State: `[waitUntilMs]`.
 */
export const delay: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const { T, tau, tat, newTat, slack, tokens } = advanceTat(state, limit, cost, nowMs);
    const rawWaitMs = newTat - tau - nowMs;
    const waitMs = rawWaitMs <= slack ? 0 : rawWaitMs;
    const allowed = waitMs <= limit.maxDelayMs + slack;
    const cap = limit.refusedPenaltyCapMs;
    // With the penalty, a refusal stores this wait-until time; retryAfterMs is counted from it.
    const refusedTat = cap === undefined ? tat : Math.max(tat, Math.min(newTat, nowMs + cap));
    const unreachable = cost * T - tau > limit.maxDelayMs + EPSILON;
    return {
      allowed,
      next: nextState1(into, allowed, newTat),
      nextIfRefused: cap === undefined ? undefined : [refusedTat],
      capacity: limit.burst,
      tokensBefore: tokens,
      tokensRefilled: 0,
      tokensAfter: tokens - cost,
      resetMs: newTat - nowMs,
      retryAfterMs: allowed ? 0 : unreachable ? Infinity : refusedTat + cost * T - tau - limit.maxDelayMs - nowMs,
      nextRefillMs: newTat <= nowMs ? 0 : Math.min(newTat - nowMs, T),
      delayMs: allowed ? waitMs : 0,
    };
  },

  refund: refundTat,

  ttlMs(state, _limit, nowMs) {
    return ttlWithBlock(state, 'delay', state[0]! - nowMs, nowMs);
  },
};
