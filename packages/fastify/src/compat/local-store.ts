import { LRUCache } from 'lru-cache';
import type { FastifyRateLimitOptions, FastifyRateLimitStore, StoreCallback, StoreChildOptions } from './store-contract.js';

/** @fastify/rate-limit's default `cache`: keys held in memory, least recently used evicted first. */
export const DEFAULT_CACHE = 5000;

interface Window {
  /** Hits since `startMs`, over-limit hits included. */
  hits: number;
  startMs: number;
}

/**
 * The in-memory store of @fastify/rate-limit 11, for its options: a fixed
 * window per key that opens at the key's first hit and counts every hit,
 * refused ones included (`current > max` is a refusal; `ban` reads how far
 * over). `continueExceeding` restarts the window at each over-limit hit.
 * `exponentialBackoff` restarts it too and reports a `ttl` of
 * `timeWindow × 2^(hits − max − 1)`; as upstream's memory store, the count
 * itself still ends `timeWindow` after that restart (its Redis store keeps
 * the longer expiry).
 * Bounded to `cache` keys (lru-cache, least recently used evicted).
 *
 * The clock is read once per call, through `now` (by default `Date.now()`,
 * read at call time so fake timers apply).
 */
export class LocalStore implements FastifyRateLimitStore {
  readonly #windows: LRUCache<string, Window>;
  readonly #continueExceeding: boolean;
  readonly #exponentialBackoff: boolean;
  readonly #now: () => number;

  constructor(options: FastifyRateLimitOptions, now: () => number = () => Date.now()) {
    this.#continueExceeding = options.continueExceeding === true;
    this.#exponentialBackoff = options.exponentialBackoff === true;
    const cache = options.cache;
    this.#windows = new LRUCache({ max: typeof cache === 'number' && Number.isInteger(cache) && cache >= 1 ? cache : DEFAULT_CACHE });
    this.#now = now;
  }

  /**
   * The ms left in the window after the last {@link hit} (what `incr` calls
   * back with as `ttl`): a field, so the synchronous path allocates nothing.
   */
  lastTtl = 0;

  /** Counts one hit of `key` and returns the hits in its window (`current`); the `ttl` is left in {@link lastTtl}. */
  hit(key: string, timeWindow: number, max: number): number {
    const nowMs = this.#now();
    let window = this.#windows.get(key);
    if (window === undefined || window.startMs + timeWindow <= nowMs) {
      window = { hits: 1, startMs: nowMs };
      this.#windows.set(key, window);
      this.lastTtl = timeWindow;
      return 1;
    }
    const hits = ++window.hits;
    let ttl = timeWindow - (nowMs - window.startMs);
    if (hits > max && (this.#continueExceeding || this.#exponentialBackoff)) {
      window.startMs = nowMs;
      ttl = this.#continueExceeding ? timeWindow : backoffMs(timeWindow, hits - max - 1);
    }
    this.lastTtl = ttl;
    return hits;
  }

  incr(key: string, callback: StoreCallback, timeWindow: number, max: number): void {
    const current = this.hit(key, timeWindow, max);
    callback(null, { current, ttl: this.lastTtl });
  }

  read(key: string, callback: StoreCallback, timeWindow: number): void {
    const nowMs = this.#now();
    // `get`, not `peek`: upstream's LRU read (toad-cache's `get`) makes the key the most recently used, so a
    // `createRateLimit()` peek keeps a client from being the next evicted, here as there.
    const window = this.#windows.get(key);
    if (window === undefined || window.startMs + timeWindow <= nowMs) callback(null, { current: 0, ttl: 0 });
    else callback(null, { current: window.hits, ttl: timeWindow - (nowMs - window.startMs) });
  }

  child(routeOptions: StoreChildOptions): LocalStore {
    return new LocalStore(routeOptions as FastifyRateLimitOptions, this.#now);
  }
}

/** `timeWindow × 2^exponent`, capped at Number.MAX_SAFE_INTEGER. */
export function backoffMs(timeWindow: number, exponent: number): number {
  const ms = timeWindow * 2 ** exponent;
  return Number.isSafeInteger(ms) ? ms : Number.MAX_SAFE_INTEGER;
}
