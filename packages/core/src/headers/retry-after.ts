/**
 * When each limit is reported to reset, and when a refused client may retry.
 *
 * **The rule.** A limit that admitted reports its `resetMs` (back to full
 * capacity; for a fixed window, the window's end, as express-rate-limit).
 * A limit that refused reports the moment it admits the same request again
 * (its `retryAfterMs`). `Retry-After` is the largest of those among the
 * refusing limits, in whole seconds rounded up, and at least 1.
 *
 * **Why, and the sources:**
 * - RFC 9110 §10.2.3: `Retry-After` is `delay-seconds`, a whole number; we
 *   round up so a client that waits the advertised time is not refused for
 *   our rounding, as every incumbent does.
 * - Never 0: `Retry-After: 0` is legal but invites a hot retry loop
 *   (and a window expiring in flight would give it). express-rate-limit can
 *   send 0; we send ≥ 1. RFC 6585 §4 leaves the value to the server.
 * - draft-ietf-httpapi-ratelimit-headers -05 to -09: on a 429 the reset
 *   SHOULD be the same moment as Retry-After; -10: Retry-After SHOULD NOT be
 *   earlier than the reset; -11: not earlier than the end of the effective
 *   window. We read these as applying to the policy or policies that refused
 *   (applied to every listed policy, an idle hourly policy would force an
 *   hour's wait). With the rule above, the binding refusing limit's reset
 *   equals Retry-After and no refusing limit's reset is later, which
 *   satisfies every draft at once.
 * - A refusing limit reports "admits again" rather than "full again" because
 *   for buckets and sliding windows "full" can be many times the real wait
 *   (a bucket of 100 refilled at 1 per minute, emptied, is full in 100 min
 *   but admits one request in 1 min). For a fixed window, the only algorithm
 *   of express-rate-limit, the two are the same instant, so its bytes match.
 * - A cost that can never pass (`retryAfterMs: Infinity`, the cost exceeds a
 *   limit's capacity) reports that limit's full window, `max(resetMs,
 *   windowMs)`: by then the limit offers everything it ever can, retrying
 *   the same request sooner is certain to fail, and a finite, moderate value
 *   neither invites an instant retry nor tells the client to go away forever.
 *   The 429 body should say the request is too large.
 * - A refusal no limit made (a store failure under `onStoreError: 'deny'`)
 *   uses the decision's own `retryAfterMs`.
 *
 * @module
 */
import type { Decision, LimitDecision } from '../decision.js';
import { deltaSeconds } from './numbers.js';

/**
 * Ms from the decision until `limit` is reported to reset: `resetMs` when it
 * admitted, the time until it admits the same request again when it refused
 * (see the module rule). Finite and ≥ 0.
 */
export function limitResetMs(limit: LimitDecision): number {
  if (limit.allowed) return limit.resetMs;
  if (Number.isFinite(limit.retryAfterMs)) return limit.retryAfterMs;
  return Math.max(limit.resetMs, limit.windowMs);
}

/** Ms a refused client should wait: the largest reset among the refusing limits (finite, ≥ 0). */
export function refusalWaitMs(decision: Decision): number {
  let wait = Number.isFinite(decision.retryAfterMs) ? decision.retryAfterMs : 0;
  let refusing = false;
  for (const limit of decision.limits) {
    if (limit.allowed) continue;
    refusing = true;
    const ms = limitResetMs(limit);
    if (ms > wait) wait = ms;
  }
  if (!refusing && !Number.isFinite(decision.retryAfterMs)) {
    for (const limit of decision.limits) if (limit.windowMs > wait) wait = limit.windowMs;
  }
  return wait;
}

/**
 * Ms until the binding limit (the one draft-6, draft-7 and the legacy
 * headers report) resets: its `resetMs` when the request was admitted, the
 * refused client's wait when it was refused, so `RateLimit-Reset` and
 * `Retry-After` point at the same moment (drafts -05 to -09).
 */
export function bindingResetMs(decision: Decision): number {
  return decision.allowed ? decision.resetMs : refusalWaitMs(decision);
}

/**
 * The `Retry-After` value for a refusal, in whole delta-seconds: at least 1,
 * rounded up, never earlier than the reset reported for any limit that
 * refused, and finite even when the cost can never pass. See the rule and
 * its sources at the top of `headers/retry-after.ts`: in short, the longest
 * time until a refusing limit admits the same request again, or that
 * limit's full window when it never will.
 *
 * Meant for refused decisions; for an admitted one it returns 1.
 *
 * @param decision - a decision, usually with `allowed: false`
 * @returns whole seconds, ≥ 1
 * @example
 * ```ts
 * const decision = limiter.consume(key);
 * if (!decision.allowed) res.setHeader('Retry-After', String(retryAfterSeconds(decision)));
 * ```
 */
export function retryAfterSeconds(decision: Decision): number {
  return Math.max(1, deltaSeconds(refusalWaitMs(decision)));
}
