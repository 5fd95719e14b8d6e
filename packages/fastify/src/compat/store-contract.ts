import type { RouteOptions } from 'fastify';

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
  child(routeOptions: StoreChildOptions): FastifyRateLimitStore;
}

/**
 * What `child()` is handed: at run time, the merged options with `routeInfo`
 * (the first member). The second is how @fastify/rate-limit 11 declares the
 * parameter (its declaration, not what its code passes either); it is kept
 * so a store class typed against @fastify/rate-limit still fits this one.
 */
export type StoreChildOptions = (FastifyRateLimitOptions & { readonly routeInfo: Partial<RouteOptions> }) | (RouteOptions & { path: string; prefix: string });

/** A `store` class: constructed once per registration with the plugin's options. */
export interface FastifyRateLimitStoreCtor {
  new (options: FastifyRateLimitOptions): FastifyRateLimitStore;
}

/**
 * The options a `store` class is constructed with: the registration's
 * options as resolved (defaults applied), of which a store reads mostly
 * these. @fastify/rate-limit 11's name for them.
 */
export interface FastifyRateLimitOptions {
  readonly max?: unknown;
  readonly timeWindow?: unknown;
  readonly continueExceeding?: boolean;
  readonly exponentialBackoff?: boolean;
  readonly cache?: number;
  readonly nameSpace?: string;
  readonly groupId?: string;
}

/** What a store answers: hits in the window (over-limit ones included) and ms left in it. */
export interface StoreResult {
  current: number;
  ttl: number;
}

export type StoreCallback = (error: Error | null, result?: StoreResult) => void;

/** True when `value` is a class (or function) to construct as a store, as upstream's `store` option takes. */
export function isStoreClass(value: unknown): value is FastifyRateLimitStoreCtor {
  return typeof value === 'function';
}
