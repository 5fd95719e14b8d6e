/**
 * What a koa-ratelimit driver answers for one request, as its `get()` does:
 * the requests left *before* this one (`remaining`; 0 = refused), the reset
 * as Unix epoch seconds, and the limit. Units and rounding are the driver's
 * own (the memory driver's `reset` has a fraction, the Redis driver's is
 * whole seconds).
 */
export interface DriverAnswer {
  readonly remaining: number;
  readonly reset: number;
  readonly total: number;
}

/**
 * A koa-ratelimit driver: counts one request of `id` under `key`
 * (`<namespace>:<id>`) and answers. Synchronous drivers answer directly.
 */
export interface Driver {
  get(key: string, id: unknown): DriverAnswer | Promise<DriverAnswer>;
  /** Forgets a key (`<namespace>:<id>`). */
  reset(key: string): void | Promise<void>;
}
