import type { ResolvedLimit } from '../limit.js';
import { type Algorithm, type LimitState, nextState2, type Step } from './types.js';
import { ttlWithBlock } from './block.js';
import { EPSILON } from './tolerance.js';

/**
 * Token bucket: a bucket of capacity `burst` refilled with `limit` tokens per
 * `windowMs`; a request of `cost` takes `cost` tokens or is refused.
 *
 * - An unseen key starts with a full bucket.
 * - A refused request changes nothing.
 * - `refill: 'continuous'` (default) credits tokens in proportion to the time
 *   elapsed. `refill: 'interval'` credits `limit` tokens per whole elapsed
 *   `windowMs`, and the refill timestamp moves (by whole intervals) only when
 *   at least one interval has elapsed, so the refill phase is kept.
 *
 * Pro: allows bursts up to `burst`, then a steady rate; the usual model for APIs.
 * Con: two numbers of state (GCRA gives the same admissions with one).
 *
 * State: `[tokens, refilledAtMs]`.
 */
export const tokenBucket: Algorithm = {
  step(state, limit, cost, nowMs, into): Step {
    const { tokens, atMs } = refill(state, limit, nowMs);
    const stored = state === undefined ? limit.burst : state[0]!;
    const allowed = cost <= tokens + EPSILON;
    const after = tokens - cost;
    const untilFull = timeToTokens(limit, atMs, nowMs, limit.burst - after);
    return {
      allowed,
      next: nextState2(into, allowed, after, atMs),
      nextIfRefused: undefined,
      capacity: limit.burst,
      tokensBefore: stored,
      tokensRefilled: tokens - stored,
      tokensAfter: after,
      resetMs: untilFull,
      retryAfterMs: allowed ? 0 : cost > limit.burst + EPSILON ? Infinity : timeToTokens(limit, atMs, nowMs, cost - tokens),
      nextRefillMs: after >= limit.burst - EPSILON ? 0 : Math.min(untilFull, timeToNextWhole(limit, atMs, nowMs, after)),
      delayMs: 0,
    };
  },

  refund(state, limit, cost, nowMs): LimitState | undefined {
    const { tokens, atMs } = refill(state, limit, nowMs);
    return [Math.min(limit.burst, tokens + cost), atMs];
  },

  ttlMs(state, limit, nowMs) {
    const { tokens, atMs } = refill(state, limit, nowMs);
    return ttlWithBlock(state, 'token-bucket', timeToTokens(limit, atMs, nowMs, limit.burst - tokens), nowMs);
  },
};

/** The bucket's level at `nowMs` and the refill timestamp to store. Does not mutate. */
function refill(state: LimitState | undefined, limit: ResolvedLimit, nowMs: number): { tokens: number; atMs: number } {
  if (state === undefined) return { tokens: limit.burst, atMs: nowMs };
  // Indexed, not destructured: array destructuring goes through the iterator protocol.
  const tokens = state[0]!;
  const atMs = state[1]!;
  const elapsed = Math.max(0, nowMs - atMs);
  if (limit.refill === 'continuous') {
    return { tokens: Math.min(limit.burst, tokens + elapsed / limit.emissionIntervalMs), atMs: Math.max(atMs, nowMs) };
  }
  const intervals = Math.floor(elapsed / limit.windowMs);
  if (intervals === 0) return { tokens, atMs };
  return { tokens: Math.min(limit.burst, tokens + intervals * limit.limit), atMs: atMs + intervals * limit.windowMs };
}

/** Ms from `nowMs` until `missing` more tokens have been credited (0 when none are missing). */
function timeToTokens(limit: ResolvedLimit, atMs: number, nowMs: number, missing: number): number {
  if (missing <= EPSILON) return 0;
  if (limit.refill === 'continuous') return missing * limit.emissionIntervalMs;
  return atMs + Math.ceil(missing / limit.limit - EPSILON) * limit.windowMs - nowMs;
}

/** Ms from `nowMs` until the level `after` next crosses a whole token. */
function timeToNextWhole(limit: ResolvedLimit, atMs: number, nowMs: number, after: number): number {
  if (limit.refill === 'interval') return atMs + limit.windowMs - nowMs;
  const fraction = after - Math.floor(after + EPSILON);
  return (1 - Math.max(0, fraction)) * limit.emissionIntervalMs;
}
