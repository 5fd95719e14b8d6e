/**
 * The policy behind a response (quota, window, algorithm), so `rateLimitHeaders(response)` can
 * write `RateLimit-Policy` without being told the window again.
 *
 * The rule: a response's policy is found through its `pending` promise, which this package always
 * makes. A response with no work left gets its algorithm instance's own settled promise
 * ({@link settledFor}, one per instance, registered once); a response with background work gets a
 * promise registered when that work is made ({@link withPolicy}, {@link replacePending}).
 *
 * Why there and not on the response itself: the response keeps the incumbent's shape (no field,
 * symbol or prototype of ours, so deep equality sees what it saw), and a WeakMap entry per response
 * cost about a tenth of a TCP decision's client CPU. A copy of a response (`{ ...response }`) keeps
 * its policy; a response whose `pending` the application replaced has none (pass `window`).
 *
 * @module
 */
import type { RatelimitResponse } from './types.js';

/** The policy of one algorithm instance. */
export interface ResponsePolicy {
  readonly algorithm: 'fixedWindow' | 'slidingWindow' | 'tokenBucket' | 'cachedFixedWindow';
  /** Requests per window; for the token bucket, tokens refilled per interval. */
  readonly quota: number;
  /** The window (or refill interval), ms. */
  readonly windowMs: number;
  /** The token bucket's maximum; the quota otherwise. */
  readonly capacity: number;
}

const policies = new WeakMap<Promise<unknown>, ResponsePolicy>();

/** A settled promise that carries `policy`: the `pending` of an instance's responses with no work left. */
export function settledFor(policy: ResponsePolicy): Promise<void> {
  const settled = Promise.resolve();
  policies.set(settled, policy);
  return settled;
}

/** Records `policy` for `response`'s own background work (its `pending`); returns `response`. */
export function withPolicy(response: RatelimitResponse, policy: ResponsePolicy): RatelimitResponse {
  policies.set(response.pending, policy);
  return response;
}

/** Sets `response.pending` to `pending`, which carries the policy the old one carried. */
export function replacePending(response: RatelimitResponse, pending: Promise<unknown>): void {
  const policy = policies.get(response.pending);
  if (policy !== undefined) policies.set(pending, policy);
  response.pending = pending;
}

/** The policy a `Ratelimit` recorded for `response`, if any. */
export function policyOf(response: RatelimitResponse): ResponsePolicy | undefined {
  return policies.get(response.pending);
}
