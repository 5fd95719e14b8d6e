import { type Decision, type LimitDecision, rateLimitHeaders, type StandardHeaders } from '@ratekit/core';
import type { Response } from 'express';
import type { RateLimitInfo } from '../types.js';
import { writeHeaders } from '../write-headers.js';

/** What express-rate-limit mode knows about a request when it writes headers. */
export interface CountedState {
  readonly limit: number;
  readonly remaining: number;
  readonly resetTime: Date | undefined;
  readonly key: string;
}

/**
 * express-rate-limit's legacy headers: `X-RateLimit-Limit`,
 * `X-RateLimit-Remaining`, and, only when the store gave a reset time,
 * `Date` and `X-RateLimit-Reset` (the reset's Unix epoch second, rounded up).
 */
export function writeLegacyCounterHeaders(res: Response, state: CountedState, nowMs: number): void {
  res.setHeader('X-RateLimit-Limit', limitText(state.limit));
  res.setHeader('X-RateLimit-Remaining', String(state.remaining));
  if (state.resetTime instanceof Date) {
    res.setHeader('Date', httpDate(nowMs));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(state.resetTime.getTime() / 1_000)));
  }
}

/** The last `X-RateLimit-Limit` value written, and the limit it is for. */
let lastLimit: unknown = Number.NaN;
let lastLimitText = 'NaN';

/** `String(limit)`, remembered for the last limit: a limiter's limit seldom changes between responses. */
function limitText(limit: number): string {
  // Numbers only: a limit function may answer with anything, and an object's `toString` may change.
  if (typeof limit !== 'number') return String(limit);
  if (!Object.is(limit, lastLimit)) {
    lastLimitText = String(limit);
    lastLimit = limit;
  }
  return lastLimitText;
}

/** The last `Date` value written, and the second it is for. */
let dateSecond = Number.NaN;
let dateText = '';

/**
 * `new Date(nowMs).toUTCString()`, formatted once per second: the text has
 * whole seconds only, and formatting it on every response was the largest
 * single cost of the legacy headers.
 */
function httpDate(nowMs: number): string {
  const second = Math.floor(nowMs / 1_000);
  if (second !== dateSecond) {
    dateText = new Date(second * 1_000).toUTCString();
    dateSecond = second;
  }
  return dateText;
}

/**
 * The standard headers of express-rate-limit mode, written by core's
 * `rateLimitHeaders()` from a one-limit decision that describes the count:
 * quota `limit`, window `windowMs`, `remaining`, and the reset (the store's
 * `resetTime`, or the whole window when it gave none). draft-8 carries the
 * policy `name` and the hashed key.
 *
 * @throws {RateKitOptionError} (draft-8) when `name` is not printable ASCII
 */
export function writeStandardCounterHeaders(res: Response, draft: Exclude<StandardHeaders, false>, state: CountedState, windowMs: number, name: string, nowMs: number): void {
  const decision = countDecision(state, windowMs, name, nowMs);
  const list = rateLimitHeaders(decision, { standardHeaders: draft, legacyHeaders: false, retryAfter: false, partitionKey: state.key });
  writeHeaders(res, list, draft !== 'draft-6' && draft !== 'draft-7');
}

/**
 * The `Retry-After` seconds of a refusal in express-rate-limit mode: until
 * the store's `resetTime` (rounded up), or the whole window when it gave
 * none. At least 1 (express-rate-limit can send 0 when the window ends
 * during the request; a client told 0 retries at once and is refused again).
 */
export function counterRetryAfter(state: CountedState, windowMs: number, nowMs: number): number {
  const seconds = state.resetTime instanceof Date ? Math.ceil((state.resetTime.getTime() - nowMs) / 1_000) : Math.ceil(windowMs / 1_000);
  return Math.max(1, seconds);
}

/** A decision describing a count, for core's header writers. Does not mutate. */
function countDecision(state: CountedState, windowMs: number, name: string, nowMs: number): Decision {
  const resetMs = state.resetTime instanceof Date ? state.resetTime.getTime() - nowMs : windowMs;
  const limit: LimitDecision = {
    name,
    algorithm: 'fixed-window',
    allowed: true,
    limit: state.limit,
    quota: state.limit,
    windowMs,
    remaining: state.remaining,
    tokensBefore: state.remaining,
    tokensRefilled: 0,
    tokensPaid: 0,
    tokensAfter: state.remaining,
    resetMs,
    retryAfterMs: 0,
    nextRefillMs: resetMs,
  };
  return { allowed: true, limit: state.limit, remaining: state.remaining, resetMs, retryAfterMs: 0, delayMs: 0, cost: 1, nowMs, policy: name, limits: [limit] };
}

/** A `req.rateLimit` as the state the header writers need. */
function stateOf(info: Pick<RateLimitInfo, 'limit' | 'remaining' | 'resetTime' | 'key'>, key = info.key): CountedState {
  return { limit: info.limit, remaining: info.remaining, resetTime: info.resetTime, key: String(key) };
}

/** express-rate-limit's `setLegacyHeaders(response, info)`: the `X-RateLimit-*` headers, unless the headers are sent. */
export function setLegacyHeaders(res: Response, info: RateLimitInfo): void {
  if (!res.headersSent) writeLegacyCounterHeaders(res, stateOf(info), Date.now());
}

/** express-rate-limit's `setDraft6Headers(response, info, windowMs)`. */
export function setDraft6Headers(res: Response, info: RateLimitInfo, windowMs: number): void {
  if (!res.headersSent) writeStandardCounterHeaders(res, 'draft-6', stateOf(info), windowMs, '', Date.now());
}

/** express-rate-limit's `setDraft7Headers(response, info, windowMs)`. */
export function setDraft7Headers(res: Response, info: RateLimitInfo, windowMs: number): void {
  if (!res.headersSent) writeStandardCounterHeaders(res, 'draft-7', stateOf(info), windowMs, '', Date.now());
}

/** express-rate-limit's `setDraft8Headers(response, info, windowMs, name, key)`. */
export function setDraft8Headers(res: Response, info: RateLimitInfo, windowMs: number, name: string, key: string): void {
  if (!res.headersSent) writeStandardCounterHeaders(res, 'draft-8', stateOf(info, key), windowMs, name, Date.now());
}

/** express-rate-limit's `setRetryAfterHeader(response, info, windowMs, retryAfter?)`: `retryAfter` as given, else {@link counterRetryAfter}. */
export function setRetryAfterHeader(res: Response, info: RateLimitInfo, windowMs: number, retryAfter?: number): void {
  if (!res.headersSent) res.setHeader('Retry-After', String(retryAfter ?? counterRetryAfter(stateOf(info), windowMs, Date.now())));
}
