/**
 * The policy behind a response (quota, window, algorithm), remembered beside each response a
 * `Ratelimit` gives, so `rateLimitHeaders(response)` can write `RateLimit-Policy` without being
 * told the window again. Kept in a WeakMap: the response object stays the incumbent's shape.
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

const policies = new WeakMap<RatelimitResponse, ResponsePolicy>();

/** Records `policy` as the policy of `response`; returns `response`. */
export function withPolicy(response: RatelimitResponse, policy: ResponsePolicy): RatelimitResponse {
  policies.set(response, policy);
  return response;
}

/** The policy a `Ratelimit` recorded for `response`, if any. */
export function policyOf(response: RatelimitResponse): ResponsePolicy | undefined {
  return policies.get(response);
}
