/**
 * RateLimiterMemcache: rate-limiter-flexible's Memcached limiter
 * (`lib/RateLimiterMemcache.js` of rlf 11.4.0), on the callback API of the
 * `memcached` npm package, reading and writing rlf's two keys (see
 * memcache-layout.ts) so that rlf processes and these share the counts.
 *
 * A consume is rlf's sequence: `incr` the counter; on a miss, `add` it with
 * the points and the TTL, then write `_expire`; when the `add` loses a race
 * (another process added the key first), start again, at most three more
 * times, then fail with rlf's `Error('Can not add key')`; after an `incr`,
 * `get` the `_expire` key for msBeforeNext. `set`, `block` and the block by
 * `blockDuration` `set` both keys; `delete` deletes both.
 *
 * Where this differs from rlf, on purpose (each because rlf's behaviour can
 * only fail or admit too much; see docs/migrating/rate-limiter-flexible.md):
 * - **reward** (a negative change) uses memcached's `decr`, which stops at 0.
 *   rlf sends `incr` a negative delta, which memcached refuses (`invalid
 *   numeric delta argument`): on a live key rlf's reward always fails with
 *   `Can not add key`, and on a missing key it `add`s `-1`, a value `incr`
 *   cannot increment, so every consume of that key fails until the TTL ends.
 *   Here a reward lowers the count, never below 0 (never more credit than
 *   rlf's Redis and Memory limiters give), and on a missing key starts the
 *   window at 0.
 * - **points that are not whole numbers** reject with an Error before
 *   anything is written (memcached counts integers; rlf `add`s such a value
 *   on a miss, which again blocks every later `incr` of the key).
 * - **TTLs over 30 days** are sent as the Unix time they end at (see
 *   {@link memcachedExptime}); rlf's keys would be stored already expired.
 * - a new window's `_expire` is written with `set`, not `add`: a stale
 *   `_expire` left by the previous window (it can outlive the counter by up
 *   to a second) no longer gives the new window msBeforeNext 0.
 * - store errors are never swallowed: a failed `_expire` write or a failed
 *   `get` rejects (rlf ignores the first and answers `null` for the second),
 *   so the call goes to the `insuranceLimiter`, or rejects with the Error.
 *
 * @module
 */
import { RateKitOptionError } from '@ratekit/core';
import { expireKeyOf, expireValue, memcachedExptime, msBeforeNextOf, msOfNewWindow, ttlSeconds } from './memcache-layout.js';
import type { IRateLimiterStoreOptions, RateLimiterCallOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterStoreAbstract } from './store-abstract.js';

/** A node-style callback, as the `memcached` package calls them. */
type Callback<T> = (error: unknown, result: T) => void;

/**
 * The part of a `memcached` client (npm `memcached`, or `memcached-mock`)
 * the limiter uses. `incr`/`decr` answer `false` for a missing key; `add`
 * fails (an error, or `false`) for an existing one.
 */
export interface MemcachedCallbackClient {
  incr(key: string, amount: number, callback: Callback<number | boolean>): unknown;
  decr(key: string, amount: number, callback: Callback<number | boolean>): unknown;
  add(key: string, value: unknown, lifetime: number, callback: Callback<boolean>): unknown;
  set(key: string, value: unknown, lifetime: number, callback: Callback<boolean>): unknown;
  get(key: string, callback: Callback<unknown>): unknown;
  del(key: string, callback: Callback<boolean>): unknown;
}

/** What `_upsert` and `_get` resolve with: rlf's raw Memcache result. */
export interface MemcacheResult {
  /** The counter's value, as the client returned it. */
  consumedPoints: number | string;
  /** Milliseconds before the window ends; -1 when it never ends. */
  msBeforeNext: number;
}

/** How many times rlf starts a consume again after its `add` lost a race (then: `Can not add key`). */
export const ADD_RETRIES = 3;

const CLIENT_METHODS = ['incr', 'decr', 'add', 'set', 'get', 'del'] as const;

/** Calls a callback-style client method as a promise. */
function call<T>(invoke: (callback: Callback<T>) => unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    invoke((error, result) => {
      if (error) reject(error instanceof Error ? error : new Error(typeof error === 'string' ? error : 'The memcached client failed', { cause: error }));
      else resolve(result);
    });
  });
}

/** Calls a method whose failure means "not done" (a miss, or a lost race) rather than a failed call: resolves with the error instead. */
function attempt<T>(invoke: (callback: Callback<T>) => unknown): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return new Promise((resolve) => {
    invoke((error, value) => resolve(error ? { ok: false, error } : { ok: true, value }));
  });
}

/**
 * rate-limiter-flexible's `RateLimiterMemcache`: a fixed window per key in
 * Memcached, shared with rlf processes on the same server.
 *
 * Options are rlf's store options ({@link IRateLimiterStoreOptions}):
 * `storeClient` (a `memcached` client, required), `points`, `duration`
 * (seconds; 0 = never resets), `keyPrefix` (default `'rlflx'`),
 * `blockDuration` (seconds), `execEvenly`, `inMemoryBlockOnConsumed`,
 * `inMemoryBlockDuration`, `insuranceLimiter`. Durations are whole seconds
 * in Memcached: `floor(ms / 1000)`, so a duration under one second never
 * expires, as in rlf.
 *
 * A refusal rejects with a {@link RateLimiterRes}; a store failure rejects
 * with an Error (or goes to `insuranceLimiter`). The behaviour is rlf 11.4.0's
 * (`lib/RateLimiterMemcache.js`, the options of its `types.d.ts`), with the
 * differences listed in this module's documentation.
 *
 * @throws {Error} `'storeClient is not set'` without `storeClient`, and rlf's other option errors (plain Errors, rlf's messages)
 * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`) when `storeClient` lacks one of `incr`, `decr`, `add`, `set`, `get`, `del`
 * @example
 * ```ts
 * import Memcached from 'memcached';
 * import { RateLimiterMemcache } from '@ratekit/flexible';
 *
 * const limiter = new RateLimiterMemcache({ storeClient: new Memcached('127.0.0.1:11211'), points: 5, duration: 1 });
 * try {
 *   await limiter.consume(req.ip);
 * } catch (rejection) {
 *   if (rejection instanceof Error) throw rejection; // Memcached failed
 *   res.status(429).set('Retry-After', String(Math.ceil(rejection.msBeforeNext / 1000))).end();
 * }
 * ```
 */
export class RateLimiterMemcache extends RateLimiterStoreAbstract {
  constructor(opts: IRateLimiterStoreOptions) {
    super(opts);
    this.client = opts.storeClient as unknown;
    const client = this.client as unknown;
    if (typeof client !== 'object' || client === null || CLIENT_METHODS.some((name) => typeof (client as Record<string, unknown>)[name] !== 'function')) {
      throw new RateKitOptionError('storeClient', `a memcached client with ${CLIENT_METHODS.join(', ')} (the callback API of the memcached package)`, client);
    }
  }

  private get memcached(): MemcachedCallbackClient {
    return this.client as MemcachedCallbackClient;
  }

  override _getRateLimiterRes(_rlKey: string, changedPoints: number, result: unknown): RateLimiterRes {
    const { consumedPoints, msBeforeNext } = result as MemcacheResult;
    const consumed = parseInt(String(consumedPoints), 10);
    const res = new RateLimiterRes();
    res.consumedPoints = consumed;
    res.isFirstInDuration = consumed === changedPoints;
    res.remainingPoints = Math.max(this.points - consumed, 0);
    res.msBeforeNext = msBeforeNext;
    return res;
  }

  override async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false, _options: RateLimiterCallOptions = {}): Promise<MemcacheResult> {
    const nowMs = Date.now();
    const secDuration = ttlSeconds(msDuration);
    const exptime = memcachedExptime(secDuration, nowMs);
    const client = this.memcached;

    if (forceExpire) {
      await call<boolean>((cb) => client.set(rlKey, points, exptime, cb));
      await call<boolean>((cb) => client.set(expireKeyOf(rlKey), expireValue(nowMs, secDuration), exptime, cb));
      return { consumedPoints: points, msBeforeNext: msOfNewWindow(secDuration) };
    }

    if (!Number.isInteger(points)) {
      throw new Error(`RateLimiterMemcache: memcached counts whole points, got ${points}`);
    }

    let lastError: unknown;
    for (let attemptNumber = 0; attemptNumber <= ADD_RETRIES; attemptNumber++) {
      // incr for a consume or a penalty; decr (which stops at 0) for a reward: memcached takes no negative delta.
      const changed = await attempt<unknown>((cb) => (points >= 0 ? client.incr(rlKey, points, cb) : client.decr(rlKey, -points, cb)));
      if (changed.ok && changed.value !== false && changed.value !== undefined && changed.value !== null) {
        const storedExpire = await call<unknown>((cb) => client.get(expireKeyOf(rlKey), cb));
        return { consumedPoints: changed.value as number | string, msBeforeNext: msBeforeNextOf(storedExpire, nowMs) };
      }
      // A miss: start the window, unless another process does it first (then count again).
      const initial = Math.max(points, 0);
      const added = await attempt<boolean>((cb) => client.add(rlKey, initial, exptime, cb));
      if (added.ok && added.value) {
        await call<boolean>((cb) => client.set(expireKeyOf(rlKey), expireValue(nowMs, secDuration), exptime, cb));
        return { consumedPoints: initial, msBeforeNext: msOfNewWindow(secDuration) };
      }
      if (!added.ok) lastError = added.error;
      else if (!changed.ok) lastError = changed.error;
    }
    throw new Error('Can not add key', lastError === undefined ? undefined : { cause: lastError });
  }

  override async _get(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<MemcacheResult | null> {
    const nowMs = Date.now();
    const client = this.memcached;
    const consumedPoints = await call<unknown>((cb) => client.get(rlKey, cb));
    // rlf answers null for a missing key and for a count of 0.
    if (!consumedPoints) return null;
    const storedExpire = await call<unknown>((cb) => client.get(expireKeyOf(rlKey), cb));
    return { consumedPoints: consumedPoints as number | string, msBeforeNext: msBeforeNextOf(storedExpire, nowMs) };
  }

  override async _delete(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<boolean> {
    const client = this.memcached;
    const deleted = await call<boolean>((cb) => client.del(rlKey, cb));
    if (deleted === false) return false;
    await call<boolean>((cb) => client.del(expireKeyOf(rlKey), cb));
    return true;
  }
}
