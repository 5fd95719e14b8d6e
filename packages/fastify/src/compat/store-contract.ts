/**
 * @fastify/rate-limit 11's store contract, which `store` classes implement
 * and the `redis` option and the default in-memory store follow.
 *
 * - `new Store(options)`: the plugin's resolved options (`max`, `timeWindow`,
 *   `continueExceeding`, `exponentialBackoff`, `cache`, …).
 * - `incr(key, callback, timeWindow, max)`: count one hit and call back with
 *   `{ current, ttl }`: hits in the window so far (over-limit hits included)
 *   and ms until the window ends.
 * - `read?(key, callback, timeWindow, max)`: the same answer without
 *   counting (`createRateLimit()`'s `{ increment: false }`); optional.
 * - `child(routeOptions)`: the store of a route with its own
 *   `config.rateLimit`, or of `rateLimit(options)` / `createRateLimit(options)`;
 *   `routeOptions` are the merged options plus `routeInfo` (the route).
 */
export interface FastifyRateLimitStore {
  incr(key: string, callback: StoreCallback, timeWindow: number, max: number): void;
  read?(key: string, callback: StoreCallback, timeWindow: number, max: number): void;
  child(routeOptions: StoreOptions & { routeInfo: Record<string, unknown> }): FastifyRateLimitStore;
}

/** A `store` class: constructed once per registration with the plugin's options. */
export type FastifyRateLimitStoreCtor = new (options: StoreOptions) => FastifyRateLimitStore;

/** What a store answers: hits in the window (over-limit ones included) and ms left in it. */
export interface StoreResult {
  current: number;
  ttl: number;
}

export type StoreCallback = (error: Error | null, result?: StoreResult) => void;

/** The options a store is built from (upstream hands it all of the resolved options). */
export interface StoreOptions {
  readonly continueExceeding?: boolean;
  readonly exponentialBackoff?: boolean;
  readonly cache?: number;
  readonly [option: string]: unknown;
}

/** True when `value` is a class (or function) to construct as a store, as upstream's `store` option takes. */
export function isStoreClass(value: unknown): value is FastifyRateLimitStoreCtor {
  return typeof value === 'function';
}
