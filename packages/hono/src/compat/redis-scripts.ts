/**
 * The Lua scripts of {@link RedisStore}, in hono-rate-limiter's data layout
 * so both libraries share counts during a migration: one integer per key
 * (`<prefix><key>`) counting the window's hits, expiring with the window
 * (`PEXPIRE windowMs` set on the first hit). Each script is one atomic step.
 * Leading whitespace is stripped, so reformatting this file cannot change a
 * script's SHA1.
 *
 * @module
 */

const script = (source: string): string => source.replaceAll(/^\s+/gm, '').trim();

export const SCRIPTS = {
  /**
   * Counts a hit. KEYS[1]: the key. ARGV[1]: '1' to restart the expiry on
   * every hit (`resetExpiryOnChange`), '0' otherwise. ARGV[2]: the window,
   * ms. Returns { hits, ms until the key expires }; a key without an expiry
   * (never, but for a key written by hand) gets the window.
   */
  increment: script(`
    local hits = redis.call("INCR", KEYS[1])
    local ttl = redis.call("PTTL", KEYS[1])
    if ttl <= 0 or ARGV[1] == "1" then
      ttl = tonumber(ARGV[2])
      redis.call("PEXPIRE", KEYS[1], ttl)
    end
    return { hits, ttl }
  `),
  /** Reads a key. KEYS[1]: the key. Returns { hits or false when absent, ms until it expires (negative when absent) }. */
  get: script(`
    return { redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]) }
  `),
  /**
   * Takes a hit back. KEYS[1]: the key. Only a positive count is lowered, and
   * the expiry is left alone: a hit given back after its window ended must
   * not create a negative count that never expires.
   */
  decrement: script(`
    local hits = tonumber(redis.call("GET", KEYS[1]))
    if hits and hits > 0 then
      redis.call("DECR", KEYS[1])
    end
    return 0
  `),
} as const;
