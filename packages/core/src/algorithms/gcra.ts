import { ttlWithBlock } from './block.js';
import { advanceTat, refundTat } from './theoretical-arrival.js';
import { EPSILON } from './tolerance.js';
import { type Algorithm, nextState1, type Step } from './types.js';

/**
 * GCRA, the generic cell rate algorithm (ATM Forum Traffic Management 4.0,
 * ITU-T I.371), also known as the leaky bucket as a meter and the "wait-until"
 * limiter. It keeps one timestamp per key, the theoretical arrival time (TAT):
 * the moment the bucket would be full again.
 *
 * With emission interval `T = windowMs / limit` and tolerance `τ = burst × T`,
 * a request of `cost` at `now` is admitted when
 *
 *     newTat = max(tat, now) + cost × T   and   newTat − now ≤ τ
 *
 * and then `newTat` is stored. Admissions match a continuous token bucket of
 * capacity `burst` refilled at `limit` per `windowMs`: `burst` can pass at once.
 *
 * Pro: exact, one number of state, expiry is lossless (an expired TAT is a full bucket).
 * Con: the refill since the last request is not separable: `tokensBefore` is the
 * level at `now` and `tokensRefilled` is 0.
 *
 * State: `[tatMs]`.
 */
export const gcra: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const { T, tau, newTat, slack, tokens } = advanceTat(state, limit, cost, nowMs);
    const allowed = newTat - nowMs <= tau + slack;
    const after = tokens - cost;
    return {
      allowed,
      next: nextState1(into, allowed, newTat),
      nextIfRefused: undefined,
      capacity: limit.burst,
      tokensBefore: tokens,
      tokensRefilled: 0,
      tokensAfter: after,
      resetMs: newTat - nowMs,
      retryAfterMs: allowed ? 0 : cost > limit.burst + EPSILON ? Infinity : newTat - tau - nowMs,
      nextRefillMs: newTat <= nowMs ? 0 : Math.min(newTat - nowMs, (1 - (after - Math.floor(after + EPSILON))) * T),
      delayMs: 0,
    };
  },

  refund: refundTat,

  ttlMs(state, _limit, nowMs) {
    return ttlWithBlock(state, 'gcra', state[0]! - nowMs, nowMs);
  },
};
