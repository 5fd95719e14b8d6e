/**
 * `rateLimitHeaders(response)`: the IETF draft-8 `RateLimit` / `RateLimit-Policy` fields and
 * `Retry-After` for a `limit()` response, which `@upstash/ratelimit` leaves to the application.
 * The fields are written by `@ratekit/core`'s `rateLimitHeaders` (the same bytes as every ratekit
 * adapter and as express-rate-limit's `draft-8`); this file only turns the response into the
 * decision core reads.
 *
 * @module
 */
import { type Decision, defaultPolicyName, type HeaderList, type HeaderStyle, type LimitDecision, rateLimitHeaders as coreRateLimitHeaders } from '@ratekit/core';
import { type Duration, ms } from './duration.js';
import { policyOf, type ResponsePolicy } from './policy.js';
import type { RatelimitResponse } from './types.js';

/** Options of {@link rateLimitHeaders}. */
export interface RateLimitHeadersOptions {
  /**
   * The window (or the token bucket's interval), for a response this package's `Ratelimit` did
   * not give, or whose `pending` was replaced (a `Ratelimit`'s own response carries its window
   * in `pending`, so a copy keeps it): a {@link Duration} or ms. Overrides the remembered one.
   */
  window?: Duration | number;
  /** The policy name. @default `<limit>-in-<window>` (core's `defaultPolicyName`, e.g. `"10-in-10sec"`) */
  name?: string;
  /** The identifier, sent hashed as `pk` in `RateLimit-Policy` (never the raw value). Omit to leave `pk` out. */
  partitionKey?: string;
  /** `'express-rate-limit'` (`; ` between parameters, the default) or `'canonical'` (`;`). */
  style?: HeaderStyle;
  /** One value per field (for setters that overwrite) instead of one entry per policy. @default false */
  combineLists?: boolean;
  /** When the headers are written, Unix epoch ms: `t` and `Retry-After` count from it. @default Date.now() */
  now?: number;
}

const ALGORITHM_NAMES = {
  fixedWindow: 'fixed-window',
  cachedFixedWindow: 'fixed-window',
  slidingWindow: 'sliding-window',
  tokenBucket: 'token-bucket',
} as const;

/**
 * The draft-8 rate-limit headers for a `limit()` response, in the order to send them:
 * `RateLimit: "<name>"; r=<remaining>; t=<seconds to reset>`, `RateLimit-Policy: "<name>";
 * q=<limit>; w=<window seconds>`, and on a refusal `Retry-After: <seconds>` (at least 1).
 *
 * The reset is the response's `reset` (the window's end, or the bucket's next refill). A token
 * bucket advertises its refill rate over the time to fill it, as core does for buckets. A
 * response that failed open (`reason: 'timeout'`) carries no figures, and a deny-list refusal
 * (`reason: 'denyList'`) is no rate limit (waiting would not help): neither gets headers.
 *
 * @param response - what `ratelimit.limit()` resolved with
 * @param options - see {@link RateLimitHeadersOptions}
 * @returns `[name, value]` pairs (append, or set with `combineLists: true`)
 * @throws {Error} when the window is unknown: a response from another limiter, without `options.window`
 * @example
 * ```ts
 * const response = await ratelimit.limit(ip);
 * for (const [name, value] of rateLimitHeaders(response, { partitionKey: ip })) res.append(name, value);
 * if (!response.success) return res.status(429).end();
 * ```
 */
export function rateLimitHeaders(response: RatelimitResponse, options: RateLimitHeadersOptions = {}): HeaderList {
  if (response.reason === 'timeout' || response.reason === 'denyList') return [];
  const remembered = policyOf(response);
  const windowMs = options.window === undefined ? remembered?.windowMs : typeof options.window === 'number' ? options.window : ms(options.window);
  if (windowMs === undefined) throw new Error('rateLimitHeaders: pass options.window for a response this package did not give');
  const now = options.now ?? Date.now();
  const decision = decisionOf(response, remembered, windowMs, options.name, now);
  return coreRateLimitHeaders(decision, {
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(options.partitionKey === undefined ? {} : { partitionKey: options.partitionKey }),
    ...(options.style === undefined ? {} : { style: options.style }),
    ...(options.combineLists === undefined ? {} : { combineLists: options.combineLists }),
  });
}

/** The response as the one-limit decision core's header writers read. */
function decisionOf(response: RatelimitResponse, policy: ResponsePolicy | undefined, windowMs: number, name: string | undefined, now: number): Decision {
  const bucket = policy?.algorithm === 'tokenBucket';
  // The response's limit is the one in force (a dynamic limit included): a window's quota, a bucket's size.
  const capacity = response.limit;
  const quota = bucket ? policy.quota : capacity;
  const untilReset = Math.max(0, response.reset - now);
  const remaining = Math.max(0, response.remaining);
  const policyName = name ?? defaultPolicyName(quota, windowMs);
  const limit: LimitDecision = {
    name: policyName,
    algorithm: policy === undefined ? 'fixed-window' : ALGORITHM_NAMES[policy.algorithm],
    allowed: response.success,
    limit: capacity,
    quota,
    windowMs,
    remaining,
    tokensBefore: remaining,
    tokensRefilled: 0,
    tokensPaid: 0,
    tokensAfter: remaining,
    resetMs: untilReset,
    retryAfterMs: response.success ? 0 : untilReset,
    nextRefillMs: 0,
  };
  return {
    allowed: response.success,
    limit: capacity,
    remaining,
    resetMs: untilReset,
    retryAfterMs: limit.retryAfterMs,
    delayMs: 0,
    cost: 1,
    nowMs: now,
    policy: policyName,
    limits: [limit],
  };
}
