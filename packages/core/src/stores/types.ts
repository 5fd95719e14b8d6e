import type { Decision } from '../decision.js';
import type { ResolvedLimit } from '../limit.js';
import type { EvaluateMode } from '../policy.js';

/** A value, or a promise of it: in-process stores answer synchronously, remote ones asynchronously. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * One whole decision for a store to run atomically.
 *
 * The limits travel with every request (as in redis-cell and gubernator), so
 * per-plan and per-route limits need no store configuration. Each limit's
 * state lives under (`key`, `namespace`, limit `name`); `key` is the only
 * user-controlled part and must never be able to reach another namespace's
 * state (stores escape or separate it).
 */
export interface EvaluateRequest {
  /** The partition key, e.g. a client IP or user id. User-controlled. */
  readonly key: string;
  /** The limiter's namespace (its `prefix`), developer-controlled. May be empty. */
  readonly namespace: string;
  /** The limits of the policy, all-or-nothing. Never empty. */
  readonly limits: readonly ResolvedLimit[];
  /** The cost to charge (consume), check (peek) or give back (refund); ≥ 0. */
  readonly cost: number;
  readonly mode: EvaluateMode;
  /**
   * The caller's clock, Unix epoch ms, read once per decision. Stores with
   * `clock: 'server'` ignore it and use their server's clock instead.
   */
  readonly nowMs: number;
}

/**
 * The store contract: the smallest surface that lets every backend run a
 * whole multi-limit decision atomically.
 *
 * - The in-memory store evaluates in process with {@link evaluatePolicy},
 *   synchronously, so the check and the write cannot interleave.
 * - The Redis store runs one Lua script per decision (EVALSHA): one hash per
 *   (namespace, key) with a field per limit, all under one hash tag so it
 *   works on Redis Cluster; `TIME` gives the clock; the script returns each
 *   limit's step and the store calls {@link buildDecision}.
 * - The PostgreSQL store runs one statement (a function doing
 *   `INSERT … ON CONFLICT DO UPDATE … RETURNING` on a row per key) with
 *   `clock_timestamp()`.
 * - The Memcached store keeps a key's limits in one item and uses CAS around
 *   {@link evaluatePolicy}, or incr/add for the window counters.
 *
 * A store failure rejects (or throws) a real `Error`; it is never reported as
 * a refusal. The limiter applies the `onStoreError` policy and timeout.
 *
 * @example
 * ```ts
 * const store: RateLimitStore = memoryStore({ maxKeys: 10_000 });
 * const decision = store.evaluate({ key: 'k', namespace: '', limits, cost: 1, mode: 'consume', nowMs: Date.now() });
 * ```
 */
export interface RateLimitStore {
  /** A short name for messages, e.g. `memory`, `redis`. */
  readonly name: string;
  /** True when several processes share the state (Redis, PostgreSQL, Memcached); false for in-process stores. */
  readonly shared: boolean;
  /** `caller`: the store uses `EvaluateRequest.nowMs`; `server`: it reads its own server's clock. */
  readonly clock: 'caller' | 'server';
  /** Runs one decision atomically. Must not report a store failure as a refusal. */
  evaluate(request: EvaluateRequest): MaybePromise<Decision>;
  /**
   * Optional capability check, called when a limiter is built (and the first
   * time a dynamic `limits` function returns a new set of limits): throws a
   * `RateKitOptionError` naming `${path}[i]` for a limit this store cannot run,
   * so a bad combination fails at start-up rather than on the first request.
   */
  assertSupports?(limits: readonly ResolvedLimit[], path: string): void;
  /**
   * Forgets every limit's state for `key` in `namespace`. `limits`, when
   * given, are the limits the caller's policy uses for this key (stores that
   * cannot list a key's state, such as Memcached, need them); a store that
   * keeps all of a key's limits together may ignore it.
   */
  resetKey(key: string, namespace: string, limits?: readonly ResolvedLimit[]): MaybePromise<void>;
  /** Releases timers and connections the store owns. */
  dispose?(): MaybePromise<void>;
}
