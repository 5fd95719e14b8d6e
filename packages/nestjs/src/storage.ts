/**
 * What a storage answers for one hit: @nestjs/throttler 6's `ThrottlerStorageRecord`.
 * Durations in whole seconds, as upstream.
 */
export interface ThrottlerStorageRecord {
  /** Hits counted in the tracker's current window, this one included (`limit + 1` once it is blocked). */
  totalHits: number;
  /** Seconds until the window resets (rounded up). */
  timeToExpire: number;
  /** True when the hit is refused: it went over the limit, or the tracker is blocked. */
  isBlocked: boolean;
  /** Seconds until the block ends (rounded up); 0 when not blocked. */
  timeToBlockExpire: number;
}

/**
 * @nestjs/throttler 6's storage contract: count one hit of `key` and say whether it is blocked.
 * `ttl` and `blockDuration` are in milliseconds. A storage written for @nestjs/throttler works here
 * unchanged, and ours ({@link ThrottlerStorageService}) works in @nestjs/throttler.
 */
export interface ThrottlerStorage {
  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord>;
}

/** The storage's injection token (`getStorageToken()`), as @nestjs/throttler's. */
export const ThrottlerStorage: unique symbol = Symbol('ThrottlerStorage');
