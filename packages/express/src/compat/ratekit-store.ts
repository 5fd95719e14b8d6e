import { type AlgorithmName, createLimiter, type Decision, type Limiter, type LimitOptions, memoryStore, RateKitError, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import { isThenable } from '../maybe.js';
import { isRateKitStore } from '../is-ratekit-store.js';
import type { ClientRateLimitInfo, Options, Store } from '../types.js';

/** Options of {@link RateKitStore}. */
export interface RateKitStoreOptions {
  /** The ratekit store holding the state (e.g. `@ratekit/redis`). @default a new in-memory store */
  store?: RateLimitStore;
  /** The algorithm of the limit built from the limiter's `windowMs` and `limit`. @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /**
   * The policy, instead of `algorithm` plus the limiter's `windowMs` and
   * `limit`: one limit, or several checked all-or-nothing. Needed when the
   * limiter's `limit` is a function.
   */
  limits?: LimitOptions | readonly LimitOptions[];
  /** The namespace in `store`, so several limiters can share it. @default '' */
  prefix?: string;
  /** The clock, Unix epoch ms. @default `Date.now()` */
  now?: () => number;
  /** The longest an asynchronous store call may take, in ms. @default 1_000 */
  storeTimeoutMs?: number;
  /**
   * Refusals answered in-process on a shared store (core's `refusalCache`
   * option of `createLimiter`). Off by default here, as in every drop-in
   * mode: the incumbents ask their store for every hit.
   * @default false
   */
  refusalCache?: boolean | { maxKeys?: number };
}

/**
 * An express-rate-limit `Store` backed by a ratekit store and algorithm, for
 * code that expects an express-rate-limit store (express-rate-limit itself,
 * express-slow-down, or this package's express-rate-limit mode). The store
 * brings its algorithm: a request is refused when the algorithm refuses it,
 * and a refusal charges nothing.
 *
 * It answers `increment` with a hit count the limiter reads correctly: for an
 * admitted request, the units in use on the binding limit (at least 1, at
 * most the limiter's `limit`); for a refused one, `limit + 1`, so the limiter
 * refuses exactly when the algorithm does. `resetTime` is when the binding
 * limit is full again, or, for a refusal, when the request would pass.
 * `decrement` refunds one unit, `get` peeks, `resetKey` resets every limit.
 *
 * The limit is built in `init` from the limiter's `windowMs` and `limit`
 * (a number) with `algorithm`, unless `limits` is given.
 *
 * @throws {RateKitOptionError} from the constructor for a bad option; from `init` (logged by the limiter) when `limits` is missing and the limiter's `limit` is not a number
 * @example
 * ```ts
 * import { rateLimit as expressRateLimit } from 'express-rate-limit';
 * import { RateKitStore } from '@ratekit/express';
 *
 * app.use(expressRateLimit({ windowMs: 60_000, limit: 100, store: new RateKitStore({ algorithm: 'sliding-window', store: redisStore({ client }) }) }));
 * ```
 */
export class RateKitStore implements Store {
  /** Keys are kept apart from other limiters' by this namespace. */
  readonly prefix: string;
  /** True for an in-process ratekit store. */
  readonly localKeys: boolean;

  readonly #options: RateKitStoreOptions;
  readonly #store: RateLimitStore;
  readonly #ownsStore: boolean;
  #limiter: Limiter | undefined;
  /** The limiter's `limit`, when it is a number: the hit count a refusal reports exceeds it. */
  #limit: number | undefined;

  constructor(options: RateKitStoreOptions = {}) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
    if (typeof options !== 'object' || options === null) throw new RateKitOptionError('options', 'an object', options);
    if (options.store !== undefined && !isRateKitStore(options.store)) {
      throw new RateKitOptionError('store', 'a ratekit RateLimitStore (with evaluate and resetKey)', options.store);
    }
    this.#options = options;
    this.#ownsStore = options.store === undefined;
    this.#store = options.store ?? memoryStore();
    this.prefix = options.prefix ?? '';
    this.localKeys = !this.#store.shared;
    // A static policy can be checked now; one built from the limiter's options waits for init.
    if (options.limits !== undefined) this.#limiter = this.#build(options.limits);
  }

  /** Builds the limit from the limiter's `windowMs` and `limit`, unless `limits` was given. */
  init(options: Pick<Options, 'windowMs' | 'limit'>): void {
    this.#limit = typeof options.limit === 'number' ? options.limit : undefined;
    if (this.#options.limits !== undefined) return;
    if (this.#limit === undefined) {
      throw new RateKitOptionError('limits', "set when the limiter's `limit` is a function (RateKitStore needs a fixed limit)", this.#options.limits);
    }
    this.#limiter = this.#build({ algorithm: this.#options.algorithm ?? 'fixed-window', limit: this.#limit, windowMs: options.windowMs });
  }

  increment(key: string): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
    const decision = this.#ready().consume(String(key));
    return isThenable(decision) ? decision.then((d) => this.#hits(d)) : this.#hits(decision);
  }

  decrement(key: string): void | Promise<void> {
    const decision = this.#ready().refund(String(key));
    if (isThenable(decision)) return decision.then(() => undefined);
  }

  get(key: string): ClientRateLimitInfo | undefined | Promise<ClientRateLimitInfo | undefined> {
    const decision = this.#ready().peek(String(key));
    return isThenable(decision) ? decision.then((d) => this.#known(d)) : this.#known(decision);
  }

  resetKey(key: string): void | Promise<void> {
    return this.#ready().reset(String(key));
  }

  /** Disposes of the in-memory store this instance made; a store passed in is left to its owner. */
  async shutdown(): Promise<void> {
    if (this.#ownsStore) await this.#store.dispose?.();
  }

  #build(limits: LimitOptions | readonly LimitOptions[]): Limiter {
    return createLimiter({
      limits,
      store: this.#store,
      prefix: this.prefix,
      now: this.#options.now ?? (() => Date.now()),
      storeTimeoutMs: this.#options.storeTimeoutMs,
      refusalCache: this.#options.refusalCache ?? false,
    });
  }

  #ready(): Limiter {
    if (this.#limiter === undefined) {
      throw new RateKitError('ERR_RATEKIT_INVALID_OPTION', 'RateKitStore has no limit yet: its init() did not run or failed (see the logged error)');
    }
    return this.#limiter;
  }

  #hits(decision: Decision): ClientRateLimitInfo {
    const resetMs = decision.allowed ? decision.resetMs : waitMs(decision);
    const resetTime = new Date(decision.nowMs + resetMs);
    if (!decision.allowed) return { totalHits: Math.floor(this.#limit ?? decision.limit) + 1, resetTime };
    const used = Math.max(1, Math.ceil(decision.limit - decision.remaining));
    // Never past the limiter's limit while admitted, or it would refuse what the algorithm admitted (0: no limit to stay under).
    return { totalHits: this.#limit === undefined || this.#limit === 0 ? used : Math.min(used, this.#limit), resetTime };
  }

  #known(decision: Decision): ClientRateLimitInfo | undefined {
    const used = Math.max(0, Math.ceil(decision.limit - decision.remaining));
    if (used === 0 && decision.resetMs === 0) return undefined;
    return { totalHits: used, resetTime: new Date(decision.nowMs + decision.resetMs) };
  }
}

/** Ms until a refused request would pass (its limit's window when it never can). */
function waitMs(decision: Decision): number {
  if (Number.isFinite(decision.retryAfterMs)) return decision.retryAfterMs;
  return Math.max(decision.resetMs, ...decision.limits.map((l) => l.windowMs));
}
