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
  /**
   * Keys taken back to zero hits while their window is open, with the
   * window's end (ms): express-rate-limit keeps such a client, so `get`
   * still answers `{ totalHits: 0, resetTime }` for it. Bounded as the store is.
   */
  readonly #zeroed = new Map<string, number>();
  #windowMs = 60_000;

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
    this.#windowMs = usableWindow(options.windowMs);
    this.#limits = [counterLimit(this.#windowMs)];
  }

  /**
   * The key's hits and reset time in its current window (`totalHits: 0` for
   * a key decremented to zero whose window is still open, as
   * express-rate-limit); `undefined` when unknown or expired.
   */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const info = this.#peek(String(key));
    if (info !== undefined) return info;
    const zeroedUntil = this.#zeroed.get(String(key));
    if (zeroedUntil === undefined) return undefined;
    if (zeroedUntil <= this.#now()) {
      this.#zeroed.delete(String(key));
      return undefined;
    }
    return { totalHits: 0, resetTime: new Date(zeroedUntil) };
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
    this.#zeroed.delete(String(key));
    this.#core.resetKey(String(key), '');
  }

  /** Forgets every key. */
  async resetAll(): Promise<void> {
    this.#zeroed.clear();
    this.#core.dispose();
    this.#core = memoryStore(this.#maxKeys === undefined ? {} : { maxKeys: this.#maxKeys });
  }

  /** Stops the pruning timer and forgets every key. */
  shutdown(): void {
    this.#core.dispose();
  }

  #increment(key: string): ClientRateLimitInfo {
    if (this.#zeroed.size > 0) this.#zeroed.delete(String(key));
    const decision = this.#core.evaluate({ key: String(key), namespace: '', limits: this.#limits, cost: 1, mode: 'consume', nowMs: this.#now() });
    return { totalHits: COUNTER_CAP - decision.remaining, resetTime: new Date(decision.nowMs + decision.resetMs) };
  }

  #decrement(key: string): void {
    const name = String(key);
    const before = this.#peek(name);
    if (before === undefined) {
      // express-rate-limit creates the client (0 hits, a new window) when it decrements an unknown key.
      if (!this.#zeroed.has(name)) this.#markZeroed(name, this.#now() + this.#windowMs);
      return;
    }
    this.#core.evaluate({ key: name, namespace: '', limits: this.#limits, cost: 1, mode: 'refund', nowMs: this.#now() });
    if (before.totalHits <= 1) this.#markZeroed(name, before.resetTime!.getTime());
  }

  #markZeroed(key: string, until: number): void {
    this.#zeroed.delete(key);
    this.#zeroed.set(key, until);
    // As bounded as the counts: the oldest mark goes first.
    if (this.#zeroed.size > (this.#maxKeys ?? 100_000)) this.#zeroed.delete(this.#zeroed.keys().next().value!);
  }

  /** The key's count in its open window, `undefined` when it has none. */
  #peek(key: string): ClientRateLimitInfo | undefined {
    const decision = this.#core.evaluate({ key, namespace: '', limits: this.#limits, cost: 0, mode: 'peek', nowMs: this.#now() });
    const totalHits = COUNTER_CAP - decision.remaining;
    if (totalHits === 0 && decision.resetMs === 0) return undefined;
    return { totalHits, resetTime: new Date(decision.nowMs + decision.resetMs) };
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

function usableWindow(given: unknown): number {
  // express-rate-limit's store hands windowMs to setInterval, which takes a numeric string as its number.
  const windowMs = typeof given === 'string' && given.trim() !== '' ? Number(given) : given;
  if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1) return 1;
  return Math.min(windowMs, LONGEST_WINDOW_MS);
}
