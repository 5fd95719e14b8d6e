/**
 * rate-limiter-flexible's Memcached layout, as pure arithmetic on times given
 * as parameters (RateLimiterMemcache reads the clock once per call and passes
 * it here).
 *
 * Two keys per limited key, both written with the same TTL:
 * - `prefix:key` holds the consumed points, a number memcached's `incr` and
 *   `decr` work on;
 * - `prefix:key_expire` holds when the window ends, in epoch milliseconds of
 *   the app's clock, or -1 when it never ends.
 *
 * The TTL is `floor(msDuration / 1000)` seconds, so a duration under one
 * second never expires, as in rlf (and as in its Redis layout). A key whose
 * `_expire` is missing answers msBeforeNext 0, as rlf's does.
 *
 * The rule is safe for a mixed fleet because it is rlf's: the same keys, the
 * same values, the same TTLs, except for TTLs over 30 days (see
 * {@link memcachedExptime}), which rlf sends as they are and memcached then
 * reads as a date in 1970.
 *
 * @module
 */

/** The `_expire` key of a counter key: rlf's suffix. */
export function expireKeyOf(rlKey: string): string {
  return `${rlKey}_expire`;
}

/** The TTL both keys get, in whole seconds: `floor(msDuration / 1000)`; 0 (never expires) for a duration under a second or not positive. */
export function ttlSeconds(msDuration: number): number {
  const seconds = Math.floor(msDuration / 1000);
  return seconds > 0 ? seconds : 0;
}

/** The value of the `_expire` key for a window that starts at `nowMs`: its end in epoch ms, or -1 for never. */
export function expireValue(nowMs: number, secDuration: number): number {
  return secDuration > 0 ? nowMs + secDuration * 1000 : -1;
}

/** msBeforeNext of a window just started: its TTL in ms, or -1 for never. */
export function msOfNewWindow(secDuration: number): number {
  return secDuration > 0 ? secDuration * 1000 : -1;
}

/**
 * msBeforeNext from the stored `_expire` value at `nowMs`: -1 for a window
 * that never ends; `max(expire - now, 0)` otherwise; 0 when the `_expire` key
 * is missing (the client gives `false` or `undefined`), as rlf computes it.
 */
export function msBeforeNextOf(storedExpire: unknown, nowMs: number): number {
  const expireMs = storedExpire === false || storedExpire === undefined || storedExpire === null ? 0 : Number(storedExpire);
  if (Number.isNaN(expireMs)) return 0;
  return expireMs >= 0 ? Math.max(expireMs - nowMs, 0) : -1;
}

/** The longest relative expiration memcached takes: past it, a number is a Unix time (memcached's protocol.txt). */
export const MAX_RELATIVE_EXPTIME_SECONDS = 30 * 24 * 3600;

/**
 * The expiration to send memcached for a TTL of `secDuration` seconds.
 *
 * memcached reads an expiration over 30 days (2,592,000 s) as an absolute
 * Unix time, so rlf's `floor(ms/1000)` for a duration of, say, 31 days names
 * a moment in 1970: memcached stores the keys already expired, every consume
 * starts a new window, and the limit never refuses. Here such a TTL is sent as
 * the Unix time it ends at (`floor(nowMs / 1000) + secDuration`, the app's
 * clock, as the `_expire` value is). Up to 30 days the TTL is sent as it is,
 * exactly as rlf sends it.
 */
export function memcachedExptime(secDuration: number, nowMs: number): number {
  if (secDuration <= MAX_RELATIVE_EXPTIME_SECONDS) return secDuration;
  return Math.floor(nowMs / 1000) + secDuration;
}
