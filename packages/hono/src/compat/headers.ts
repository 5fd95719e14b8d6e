/**
 * hono-rate-limiter's headers: draft-6 (`RateLimit-Policy`, `-Limit`,
 * `-Remaining`, `-Reset`), draft-7 (`RateLimit-Policy` and the combined
 * `RateLimit`), and `Retry-After` on refusals, all in whole seconds from
 * the store's `resetTime`. A context already finalized (a response sent)
 * is left alone. The values follow hono-rate-limiter 0.5.4's
 * `src/headers.ts`: the reset is rounded up and never negative; draft-6
 * omits it when the store gives no `resetTime` (or it is now), draft-7
 * and `Retry-After` fall back to the window.
 *
 * @module
 */
import type { Context } from 'hono';
import type { RateLimitInfo } from './types.js';

/** Seconds until `resetTime` (rounded up, ≥ 0); without one, the window in seconds, or `undefined` without a window. */
function resetSeconds(resetTime: Date | undefined, windowMs: number | undefined, nowMs: number): number | undefined {
  if (resetTime !== undefined) return Math.max(0, Math.ceil((resetTime.getTime() - nowMs) / 1000));
  return windowMs ? Math.ceil(windowMs / 1000) : undefined;
}

/** Writes the draft-6 fields; `RateLimit-Reset` only when the store gave a future `resetTime`. */
export function setDraft6Headers(c: Context, info: RateLimitInfo, windowMs: number): void {
  if (c.finalized) return;
  c.header('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  c.header('RateLimit-Limit', String(info.limit));
  c.header('RateLimit-Remaining', String(info.remaining));
  const reset = resetSeconds(info.resetTime, undefined, Date.now());
  if (reset) c.header('RateLimit-Reset', String(reset));
}

/** Writes the draft-7 fields: `RateLimit-Policy` and `RateLimit: limit=.., remaining=.., reset=..`. */
export function setDraft7Headers(c: Context, info: RateLimitInfo, windowMs: number): void {
  if (c.finalized) return;
  c.header('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  const reset = resetSeconds(info.resetTime, windowMs, Date.now());
  c.header('RateLimit', `limit=${info.limit}, remaining=${info.remaining}, reset=${String(reset)}`);
}

/** Writes `Retry-After`, in whole seconds (the window when the store gives no `resetTime`). */
export function setRetryAfterHeader(c: Context, info: RateLimitInfo, windowMs: number): void {
  if (c.finalized) return;
  c.header('Retry-After', resetSeconds(info.resetTime, windowMs, Date.now())?.toString());
}
