/**
 * The number formats every header shares. Header values are Structured
 * Fields Integers (RFC 9651 §3.3.1) or `delay-seconds` (RFC 9110 §10.2.3):
 * non-negative whole numbers of at most 15 digits, written as plain decimal
 * strings. These helpers never return NaN, a fraction, a negative number or
 * an exponent, so no header can be malformed by a stray value.
 *
 * @module
 */

/** The largest Structured Fields Integer (RFC 9651 §3.3.1): 15 digits. */
export const MAX_SF_INTEGER = 999_999_999_999_999;

/**
 * Float noise tolerated when rounding durations up, in ms. Bucket rates such
 * as 3 per 1,000 ms give durations like 1000.0000000001 ms, which must not
 * become an extra second.
 */
const NOISE_MS = 1e-6;

/**
 * A count (quota, capacity, remaining) as a header integer: rounded down
 * (advertising less than is allowed is safe; more is not), clamped to
 * 0…{@link MAX_SF_INTEGER}; NaN gives 0. Does not allocate for integers.
 */
export function countValue(count: number): number {
  if (!(count > 0)) return 0;
  return count >= MAX_SF_INTEGER ? MAX_SF_INTEGER : Math.floor(count);
}

/**
 * A duration in ms rounded up to whole ms, forgiving float noise; never
 * negative (NaN gives 0, `Infinity` gives {@link MAX_SF_INTEGER}).
 */
export function wholeMs(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms >= MAX_SF_INTEGER ? MAX_SF_INTEGER : Math.ceil(ms - NOISE_MS);
}

/**
 * A duration in ms as whole delta-seconds, rounded up so that a client that
 * waits the advertised time is never turned away for our rounding (all the
 * incumbents round up: express-rate-limit, @fastify/rate-limit). Never
 * negative; at most {@link MAX_SF_INTEGER}.
 *
 * @example
 * ```ts
 * deltaSeconds(59_001); // 60
 * deltaSeconds(0);      // 0
 * ```
 */
export function deltaSeconds(ms: number): number {
  return Math.min(MAX_SF_INTEGER, Math.ceil(wholeMs(ms) / 1_000));
}

/**
 * The Unix epoch second at which `ms` from `nowMs` have passed, rounded up
 * (express-rate-limit's `X-RateLimit-Reset`: `Math.ceil(resetTime / 1000)`).
 */
export function epochSeconds(nowMs: number, ms: number): number {
  const at = wholeMs(nowMs) + wholeMs(ms);
  return Math.min(MAX_SF_INTEGER, Math.ceil(at / 1_000));
}
