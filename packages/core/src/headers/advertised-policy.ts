/**
 * The quota and window a limit advertises in its headers (`q` and `w` of `RateLimit-Policy`, the
 * draft-6/7 `RateLimit-Limit` and `limit=`, and `X-RateLimit-Limit`), so that every field a response
 * carries agrees with every other: the remaining count never exceeds the advertised quota, and the
 * legacy limit is that quota.
 *
 * The rule:
 * - A limit whose capacity equals its quota (every window algorithm; a bucket with `burst` equal to
 *   `limit`) advertises its own quota per its own window: `q=limit; w=windowMs`.
 * - A bucket whose capacity differs from its quota (token bucket, GCRA or delay with `burst` not equal to
 *   `limit`) advertises its capacity over the time to refill it from empty, in whole seconds: `w` =
 *   max(1 s, `burst` × `windowMs` / `limit`, rounded up to a second), `q` = what it refills in `w` at its
 *   sustained rate, and at least its capacity. 10 per second with a burst of 20: `q=20; w=2`. A delay of
 *   10 per second with `burst` 1: `q=10; w=1`.
 *
 * Why: draft-ietf-httpapi-ratelimit-headers-08 §3.1.1 defines `q` as the quota units the policy
 * allocates over `w`, and §4.1.1 `r` as the quota units remaining. A bucket of 20 advertised as `q=10`
 * would send `r=19` beside `q=10`, which no client can reconcile; advertising the capacity keeps
 * `r <= q`, and the window is the one over which that capacity is honestly "the quota": a client that
 * spends `q` units per `w` is never refused.
 *
 * @module
 */
import type { Decision } from '../decision.js';

/** What the rule reads: a `LimitDecision` is one. */
export interface AdvertisedShape {
  /** The quota per window, the limit's `limit` option. */
  readonly quota: number;
  /** The window, in ms. */
  readonly windowMs: number;
  /** The capacity (the quota for windows, `burst` for buckets); the quota when absent. */
  readonly limit?: number;
}

/** Guards the whole-second rounding against float noise (3 × (1000 / 3) is 1000.0000000000001). */
const EPSILON = 1e-9;

/**
 * The quota a limit advertises, the `q` of its `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-08
 * §3.1.1; the module's rule): for an adapter that writes a limit field itself, so that it agrees with the rest.
 *
 * @param shape - one limit's entry of a decision (`decision.limits[i]`, a `LimitDecision`)
 * @returns a whole or fractional number of units, at least the limit's capacity; throws nothing
 * @example
 * ```ts
 * const decision = limiter.consume(key) as Decision; // a token bucket of 10 per second, burst 20
 * advertisedQuota(decision.limits[0]!); // 20, as in `RateLimit-Policy: "read"; q=20; w=2`
 * ```
 */
export function advertisedQuota(shape: AdvertisedShape): number {
  const capacity = shape.limit ?? shape.quota;
  if (capacity === shape.quota) return shape.quota;
  return Math.max(capacity, Math.floor((advertisedWindowMs(shape) * shape.quota) / shape.windowMs + EPSILON));
}

/** The advertised window, in ms: see the module's rule. */
export function advertisedWindowMs(shape: AdvertisedShape): number {
  const capacity = shape.limit ?? shape.quota;
  if (capacity === shape.quota) return shape.windowMs;
  return Math.max(1, Math.ceil((capacity * shape.windowMs) / shape.quota / 1000 - EPSILON)) * 1000;
}

/**
 * The binding limit: the decision's `policy` (the limit its top-level figures come from), or its
 * first limit; `undefined` only for a decision without limits (a fail-open `allow`).
 *
 * @example
 * ```ts
 * bindingLimit(decision)?.windowMs; // the window of the limit that refused
 * ```
 */
export function bindingLimit(decision: Decision): Decision['limits'][number] | undefined {
  const { limits } = decision;
  for (let i = 1; i < limits.length; i++) if (limits[i]!.name === decision.policy) return limits[i];
  return limits[0];
}

/**
 * The binding limit's advertised quota: what the single-limit fields (`X-RateLimit-Limit`, draft-6's
 * `RateLimit-Limit`, draft-7's `limit=`) report beside its remaining count. The binding limit is
 * {@link bindingLimit}'s.
 */
export function bindingQuota(decision: Decision): number {
  const binding = bindingLimit(decision);
  return binding === undefined ? decision.limit : advertisedQuota(binding);
}
