import { type MemoryStore as CoreMemoryStore, memoryStore, type ResolvedLimit, resolveLimit } from '@ratekit/core';
import type { ClientRateLimitInfo, Options, Store } from '../types.js';
import type { Validations } from './validations.js';

/** The counter's ceiling: a fixed window so wide it never refuses, so every hit counts (express-rate-limit's store counts, the middleware decides). */
const COUNTER_CAP = Number.MAX_SAFE_INTEGER;

/** The widest window kept, in ms (about 31,700 years): an infinite `windowMs` means "never reset". */
const LONGEST_WINDOW_MS = 1e15;

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most keys held at once; the least recently used is dropped beyond
   * it (and starts again from zero). express-rate-limit's store has no bound.
   * @default 100_000
   */
  maxKeys?: number;
  /** The clock, Unix epoch ms. @default `Date.now()` */
  now?: () => number;
}

/** The synchronous operations the middleware uses on the default store, so its request path needs no promise. */
export interface SyncCounter {
  increment(key: string): ClientRateLimitInfo;
  decrement(key: string): void;
}

const counters = new WeakMap<MemoryStore, SyncCounter>();
const validationsOf = new WeakMap<MemoryStore, Validations>();

/**
 * express-rate-limit's `MemoryStore`, on @ratekit/core's in-memory store: a
 * hit counter per key with a fixed window that starts at the key's first hit
 * (core's `fixed-window` algorithm, set so wide that it never refuses: every
 * hit counts and the middleware compares the count with `limit`).
 *
 * Same contract and answers as express-rate-limit v8's (`init`, `get`,
 * `increment`, `decrement`, `resetKey`, `resetAll`, `shutdown`,
 * `localKeys: true`; the methods return promises), so code written for it,
 * such as `@express-rate-limit/cluster-memory-store`, works with it.
 * Differences: at most `maxKeys` keys are kept (least recently used
 * dropped), and expired keys are dropped by core's pruning rather than by a
 * timer swapping two maps every window.
 *
 * @example
 * ```ts
 * import { rateLimit, MemoryStore } from '@ratekit/express';
 * app.use(rateLimit({ windowMs: 60_000, limit: 100, store: new MemoryStore({ maxKeys: 50_000 }) }));
 * ```
 */
export class MemoryStore implements Store {
  /** The window, in ms, as given to `init`. */
  windowMs: number | undefined;
  /** Counts in one instance never affect another. */
  readonly localKeys = true;

  #core: CoreMemoryStore;
  #limits: readonly ResolvedLimit[] = [counterLimit(60_000)];
  readonly #now: () => number;
  readonly #maxKeys: number | undefined;

  /** @throws {RateKitOptionError} when `maxKeys` is not an integer ≥ 1 */
  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? (() => Date.now());
    this.#maxKeys = options.maxKeys;
    this.#core = memoryStore(options.maxKeys === undefined ? {} : { maxKeys: options.maxKeys });
    counters.set(this, {
      increment: (key) => this.#increment(key),
      decrement: (key) => this.#decrement(key),
    });
  }

  /**
   * Reads `windowMs` from the limiter's options. An unusable value is
   * reported as express-rate-limit does (`ERR_ERL_WINDOW_MS`, for the store
   * the limiter made itself) and replaced: below 1 ms or not a number by 1 ms,
   * an infinite one by a window that never ends in practice.
   */
  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs;
    validationsOf.get(this)?.windowMs(options.windowMs);
    this.#limits = [counterLimit(usableWindow(options.windowMs))];
  }

  /** The key's hits and reset time in its current window; `undefined` when unknown or expired. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const decision = this.#core.evaluate({ key: String(key), namespace: '', limits: this.#limits, cost: 0, mode: 'peek', nowMs: this.#now() });
    const totalHits = COUNTER_CAP - decision.remaining;
    if (totalHits === 0 && decision.resetMs === 0) return undefined;
    return { totalHits, resetTime: new Date(decision.nowMs + decision.resetMs) };
  }

  /** Counts a hit; starts a new window when the last one has ended. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    return this.#increment(key);
  }

  /** Takes a hit back (never below 0). */
  async decrement(key: string): Promise<void> {
    this.#decrement(key);
  }

  /** Forgets a key. */
  async resetKey(key: string): Promise<void> {
    this.#core.resetKey(String(key), '');
  }

  /** Forgets every key. */
  async resetAll(): Promise<void> {
    this.#core.dispose();
    this.#core = memoryStore(this.#maxKeys === undefined ? {} : { maxKeys: this.#maxKeys });
  }

  /** Stops the pruning timer and forgets every key. */
  shutdown(): void {
    this.#core.dispose();
  }

  #increment(key: string): ClientRateLimitInfo {
    const decision = this.#core.evaluate({ key: String(key), namespace: '', limits: this.#limits, cost: 1, mode: 'consume', nowMs: this.#now() });
    return { totalHits: COUNTER_CAP - decision.remaining, resetTime: new Date(decision.nowMs + decision.resetMs) };
  }

  #decrement(key: string): void {
    this.#core.evaluate({ key: String(key), namespace: '', limits: this.#limits, cost: 1, mode: 'refund', nowMs: this.#now() });
  }
}

/** The synchronous counter behind a {@link MemoryStore}, for the middleware; `undefined` for any other store. */
export function syncCounter(store: unknown): SyncCounter | undefined {
  return store instanceof MemoryStore ? counters.get(store) : undefined;
}

/** Lets `init` report an unusable `windowMs`, as express-rate-limit does for the store it makes itself. */
export function attachValidations(store: MemoryStore, validations: Validations): void {
  validationsOf.set(store, validations);
}

function counterLimit(windowMs: number): ResolvedLimit {
  return resolveLimit({ algorithm: 'fixed-window', limit: COUNTER_CAP, windowMs, name: 'express-rate-limit hits' });
}

function usableWindow(windowMs: unknown): number {
  if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1) return 1;
  return Math.min(windowMs, LONGEST_WINDOW_MS);
}
