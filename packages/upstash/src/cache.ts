/**
 * The ephemeral cache (`ephemeralCache`): identifiers refused until a known reset, kept in the
 * application's `Map` so that a later request from the same identifier is refused without a
 * Redis call (`reason: 'cacheBlock'`). `cachedFixedWindow` also keeps its window counts in it.
 *
 * The Map's content is `@upstash/ratelimit`'s: `identifier -> reset (epoch ms)` and
 * `window key -> count`, so one Map may be shared with the incumbent during a migration.
 *
 * @module
 */

/** What the algorithms need from the cache; the incumbent's `EphemeralCache` has the same members. */
export interface EphemeralCache {
  isBlocked(identifier: string): { blocked: boolean; reset: number };
  blockUntil(identifier: string, reset: number): void;
  set(key: string, value: number): void;
  get(key: string): number | null;
  incr(key: string, incrementAmount?: number): number;
  pop(key: string): void;
  empty(): void;
  size(): number;
}

/**
 * An {@link EphemeralCache} over `map`, on the clock `now` (Unix epoch ms).
 *
 * @param map - the application's Map, e.g. one created at module scope so it outlives a request
 * @param now - the clock that says when a block has ended; `Date.now` unless the limiter has `now`
 * @example
 * ```ts
 * const cache = ephemeralCache(new Map(), Date.now);
 * cache.blockUntil('user:1', Date.now() + 1_000);
 * cache.isBlocked('user:1'); // { blocked: true, reset: ... }
 * ```
 */
export function ephemeralCache(map: Map<string, number>, now: () => number): EphemeralCache {
  // One answer for every identifier not blocked (most calls), not an object per call.
  const notBlocked = Object.freeze({ blocked: false, reset: 0 });
  return {
    isBlocked(identifier) {
      const reset = map.get(identifier);
      if (reset === undefined) return notBlocked;
      // Blocked up to and including the reset instant, as the incumbent (`reset < now` unblocks).
      if (reset < now()) {
        map.delete(identifier);
        return notBlocked;
      }
      return { blocked: true, reset };
    },
    blockUntil(identifier, reset) {
      map.set(identifier, reset);
    },
    set(key, value) {
      map.set(key, value);
    },
    get(key) {
      // A count of 0 reads as absent, as in the incumbent (`get(key) || null`).
      const value = map.get(key);
      return value === undefined || value === 0 || Number.isNaN(value) ? null : value;
    },
    incr(key, incrementAmount = 1) {
      const value = (map.get(key) ?? 0) + incrementAmount;
      map.set(key, value);
      return value;
    },
    pop(key) {
      map.delete(key);
    },
    empty() {
      map.clear();
    },
    size() {
      return map.size;
    },
  };
}
