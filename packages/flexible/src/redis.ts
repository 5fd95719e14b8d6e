/**
 * RateLimiterRedis: rate-limiter-flexible's Redis limiter (`lib/RateLimiterRedis.js`,
 * 11.4.0), on ioredis or node-redis 4+ (client, cluster or Sentinel client),
 * reading and writing rlf's own data, so rlf processes and ours can share one
 * Redis while a fleet switches one instance at a time.
 *
 * The rule: each key is rlf's `prefix:key`, an integer string with a TTL in
 * whole seconds (`floor(ms / 1000)`; none for a duration under one second),
 * written by scripts of our own (redis-scripts.ts) that do what rlf's
 * commands do, and answered from the server's PTTL, as rlf answers. The
 * decisions (refusal, blockDuration, execEvenly, the in-memory block,
 * insurance) are the abstract's (store-abstract.ts), the same code for every
 * store; this file only stores.
 *
 * @module
 */
import { resolveCoalescing, resolveStoreTimeoutMs, withStoreTimeout } from '@ratekit/core';
import type { AllOrNothingAnswer, AllOrNothingEntry, AllOrNothingParticipant } from './all-or-nothing.js';
import type { IRateLimiterRedisOptions, RateLimiterCallOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { consumeAllOrNothingOnRedis } from './redis-all-or-nothing.js';
import { isNodeRedis3, isRedisReady, redis3Unsupported, type RedisTransport, redisTransport, UNKNOWN_CLIENT_MESSAGE } from './redis-client.js';
import { type OperationCode, type OperationSender, operationSender } from './redis-operations.js';
import { scriptSha } from './redis-scripts.js';
import { RateLimiterStoreAbstract } from './store-abstract.js';

/**
 * Options of {@link RateLimiterRedis}: rlf's {@link IRateLimiterRedisOptions}
 * (every one with rlf's meaning), plus ratekit's coalescing and store timeout.
 */
export interface RateLimiterRedisOptions extends IRateLimiterRedisOptions {
  /**
   * rlf's `storeClient`: a connected ioredis client (`new Redis()`, with
   * `sentinels`, or `new Cluster()`), or a node-redis 4 or 5 client
   * (`createClient`, `createCluster`, v5 `createSentinel`). The limiter never
   * connects, closes or reconfigures it. A client of neither library is
   * accepted at construction (as rlf does) and each call then rejects with an Error.
   * @throws {Error} 'storeClient is not set' when undefined (rlf's message)
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so: code typed against rlf passes its own client types
  storeClient: any;
  /**
   * rlf's `rejectIfRedisNotReady`: when true, a call while the client is not
   * ready rejects at once with `Error('Redis connection is not ready')` (or
   * goes to `insuranceLimiter`) instead of waiting in the client's queue.
   * Ready means: ioredis `status === 'ready'`; node-redis `isReady`; a
   * node-redis cluster `isOpen` (and, for a client exposing rlf's
   * `_slots.getClient`, that node's `isReady`). `delete` is not checked, as in rlf.
   * @default false
   */
  rejectIfRedisNotReady?: boolean;
  /**
   * rlf's `useRedisPackage` (node-redis 4+). Accepted and not needed: the
   * client's library is recognised from the client itself, node-redis 5 included (rlf #314).
   */
  useRedisPackage?: boolean;
  /**
   * rlf's `useRedis3AndLowerPackage`. node-redis 3 and older are not
   * supported: `true` (or a node-redis 3 client) throws at construction.
   * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`, option `useRedis3AndLowerPackage`)
   */
  useRedis3AndLowerPackage?: boolean;
  /**
   * rlf's `customIncrTtlLuaScript`: your Lua script for a consume, penalty or
   * reward whose window is one second or more, run (EVALSHA, then EVAL on
   * NOSCRIPT) with rlf's KEYS and ARGV, `KEYS[1]` = `prefix:key`, `ARGV` =
   * `[points, secDuration, limiter.points, limiter.duration]` (strings), and
   * replying `{consumedPoints, msBeforeNext}`. Such a limiter does not
   * coalesce and cannot join an all-or-nothing union.
   */
  customIncrTtlLuaScript?: string;
  /**
   * ratekit: coalesce store calls, as @ratekit/redis does. The operations asked
   * in one iteration of the event loop after its first (which goes at once,
   * alone) go to Redis in one script call that runs them in order, each
   * exactly as alone: the results are the same as without coalescing
   * (redis-operations.ts says why). On a cluster, one call per hash slot.
   * Off (`false`) when `customIncrTtlLuaScript` is given.
   * @default true
   */
  coalesce?: boolean;
  /** ratekit: the most operations in one coalesced call (an integer ≥ 2). @default 64 */
  maxBatchSize?: number;
  /**
   * ratekit: how many coalesced calls to aim to have in flight at once (an
   * integer ≥ 0; see core's `batchesInFlight`).
   * @default 2 on ioredis (which writes each command at once); 0 on node-redis and on ioredis with `enableAutoPipelining`
   */
  batchesInFlight?: number;
  /**
   * ratekit: milliseconds a store call may take; one that has not answered by
   * then rejects with a `RateKitError` (code `ERR_RATEKIT_STORE`), which goes
   * to `insuranceLimiter` like any store failure, so no request waits on a
   * Redis that does not answer (a node-redis client queues commands while it
   * reconnects). `Infinity`: no timeout (rlf's behaviour). A call that timed
   * out may still reach Redis later.
   * @default 1000
   */
  storeTimeoutMs?: number;
}

/**
 * rate-limiter-flexible's Redis limiter, as a drop-in: the same options
 * (rlf's documented `storeClient`, `rejectIfRedisNotReady`, `useRedisPackage`,
 * `customIncrTtlLuaScript`, and those of every store limiter), results,
 * rejections and errors, and the same Redis data as rlf 11.4.
 *
 * - **Data**: `keyPrefix:key` holds the consumed points as an integer string,
 *   with a TTL of the window in whole seconds, started by the window's first
 *   consume and never extended by the next (`SET NX EX`, `INCRBY`, `PTTL`, and
 *   `EXPIRE` when a key has no TTL); a duration under one second gives no TTL;
 *   `set`, `block` and blockDuration write `SET … EX` (0 seconds: no TTL); `get`
 *   reads the count and PTTL; `delete` is `DEL`. `msBeforeNext` is Redis's PTTL.
 * - **Clients**: ioredis (`Redis`, `Cluster`, Sentinel) and node-redis 4 and 5
 *   (`createClient`, `createCluster`, v5 `createSentinel`), recognised from the
 *   client itself: `useRedisPackage` is accepted and not needed (rlf missed
 *   node-redis 5 without it, rlf #314). Every call is one script call on one
 *   key (coalesced: on keys of one hash slot), sent with that key, so a
 *   cluster client routes it to its node (on a node-redis cluster through
 *   `sendCommand(key, …)`: node-redis 4 routes `evalSha` by no key, rlf #283).
 * - **Scripts**: EVALSHA, then EVAL on `NOSCRIPT` (a restart, a failover, `SCRIPT
 *   FLUSH`): a client that reconnects to another server carries on.
 *   `customIncrTtlLuaScript` runs with rlf's KEYS and ARGV (`[key]`,
 *   `[points, secDuration, limiter.points, limiter.duration]`) for a consume,
 *   penalty or reward with a duration of one second or more.
 * - **Errors**: points that are not integers reject with rlf's messages
 *   ('Consuming decimal number of points is not supported by this package',
 *   'Consuming string different than integer values is not supported by this
 *   package'); with `rejectIfRedisNotReady`, a call while the client is not
 *   ready rejects with 'Redis connection is not ready'; any store failure
 *   rejects with an `Error`, or is answered by `insuranceLimiter`.
 * - **ratekit adds** coalesced store calls (`coalesce`, `maxBatchSize`,
 *   `batchesInFlight`), a store timeout (`storeTimeoutMs`, default 1 s) and the
 *   all-or-nothing RateLimiterUnion (one atomic script over every limiter's key).
 *
 * @throws {Error} rlf's option errors (`points`, `duration`, `storeClient is not set`, the in-memory block options)
 * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`) for `coalesce`, `maxBatchSize`, `batchesInFlight` or `storeTimeoutMs` out of range, and for `useRedis3AndLowerPackage` or a node-redis 3 client (not supported)
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { RateLimiterRedis, RateLimiterRes } from '@ratekit/flexible';
 *
 * const limiter = new RateLimiterRedis({ storeClient: new Redis(), keyPrefix: 'login', points: 5, duration: 60 });
 * try {
 *   const res = await limiter.consume(ip);
 *   // res.remainingPoints, res.msBeforeNext
 * } catch (rejection) {
 *   if (rejection instanceof RateLimiterRes) retryAfter(rejection.msBeforeNext);
 *   else throw rejection; // Redis failed
 * }
 * ```
 */
export class RateLimiterRedis extends RateLimiterStoreAbstract implements AllOrNothingParticipant {
  /** rlf's `rejectIfRedisNotReady`. */
  _rejectIfRedisNotReady: boolean;
  /** rlf's `customIncrTtlLuaScript`, or undefined for ours. */
  _incrTtlLuaScript: string | undefined;
  /** True for a node-redis client (given, or recognised); informational, as the client's shape decides. */
  useRedisPackage: boolean;
  /** rlf's option; true is refused at construction. */
  useRedis3AndLowerPackage: boolean | undefined;
  /** The client's transport, or undefined for a client that is not a Redis client this package knows. */
  readonly _transport: RedisTransport | undefined;
  readonly _sender: OperationSender | undefined;
  readonly _storeTimeoutMs: number;
  readonly #customSha: string | undefined;

  constructor(opts: RateLimiterRedisOptions) {
    super(opts);
    this.client = opts.storeClient as unknown;
    this._rejectIfRedisNotReady = Boolean(opts.rejectIfRedisNotReady);
    this._incrTtlLuaScript = opts.customIncrTtlLuaScript || undefined;
    this.#customSha = this._incrTtlLuaScript === undefined ? undefined : scriptSha(this._incrTtlLuaScript);
    this.useRedis3AndLowerPackage = opts.useRedis3AndLowerPackage;
    if (opts.useRedis3AndLowerPackage) throw redis3Unsupported(opts.useRedis3AndLowerPackage);
    if (isNodeRedis3(this.client)) throw redis3Unsupported('a node-redis 3 client');
    this._transport = redisTransport(this.client);
    this.useRedisPackage = Boolean(opts.useRedisPackage) || this._transport?.library === 'node-redis';
    const coalescing = resolveCoalescing(opts, this._transport?.writesEachCommand ? 2 : 0);
    this._storeTimeoutMs = resolveStoreTimeoutMs(opts.storeTimeoutMs);
    this._sender = this._transport === undefined ? undefined : operationSender(this._transport, { ...coalescing, coalesce: coalescing.coalesce && this._incrTtlLuaScript === undefined });
  }

  /** What one all-or-nothing call can cover: this client (see all-or-nothing.ts). */
  get _allOrNothingStore(): object {
    return this.client as object;
  }

  /**
   * rlf's readiness check, when `rejectIfRedisNotReady` is set (see
   * redis-client.ts's `isRedisReady`); true otherwise.
   */
  _isRedisReady(rlKey: string, isReadonly: boolean): boolean {
    return !this._rejectIfRedisNotReady || isRedisReady(this.client, rlKey, isReadonly);
  }

  /** rlf's result: `[consumed, pttl]` (ioredis MULTI replies `[[err, v], …]` are read too, for subclasses that send their own). */
  override _getRateLimiterRes(_rlKey: string, changedPoints: number, result: unknown): RateLimiterRes {
    let [consumed, msBeforeNext] = result as [unknown, unknown];
    if (Array.isArray(consumed)) {
      consumed = consumed[1];
      msBeforeNext = (msBeforeNext as unknown[])[1];
    }
    const res = new RateLimiterRes();
    res.consumedPoints = parseInt(String(consumed), 10);
    res.isFirstInDuration = res.consumedPoints === changedPoints;
    res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    res.msBeforeNext = msBeforeNext as number;
    return res;
  }

  /**
   * Adds `points` to the key (a consume, a penalty, a reward), starting a
   * window of `floor(msDuration / 1000)` seconds when the key is new; with
   * `forceExpire`, sets the key to `points` for that many seconds (0: no TTL).
   * Resolves with `[count, pttl]`.
   */
  override async _upsert(rlKey: string, points: number | string, msDuration: number, forceExpire = false, _options: RateLimiterCallOptions = {}): Promise<unknown> {
    checkPoints(points);
    if (!this._isRedisReady(rlKey, false)) throw new Error('Redis connection is not ready');
    const secDuration = Math.floor(msDuration / 1000);
    if (forceExpire) return this._send(rlKey, 's', String(points), secDuration > 0 ? String(secDuration) : '0');
    if (secDuration > 0 && this._incrTtlLuaScript !== undefined) {
      const transport = this._transportOrThrow();
      const args = [String(points), String(secDuration), String(this.points), String(this.duration)];
      return this._bounded(transport.run(this._incrTtlLuaScript, this.#customSha!, [rlKey], args));
    }
    return this._send(rlKey, secDuration > 0 ? 'i' : 'n', String(points), secDuration > 0 ? String(secDuration) : '0');
  }

  /** The key's `[count, pttl]`, or null when it does not exist. */
  override async _get(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<unknown> {
    if (!this._isRedisReady(rlKey, true)) throw new Error('Redis connection is not ready');
    const reply = await this._send(rlKey, 'g', '0', '0');
    return reply ?? null;
  }

  /** `DEL`; true when the key existed. */
  override async _delete(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<boolean> {
    const deleted = await this._send(rlKey, 'd', '0', '0');
    return Number(deleted) > 0;
  }

  /**
   * The all-or-nothing union's call (see all-or-nothing.ts): every entry's key
   * checked and charged in one script, or none. Each entry is charged as a
   * lone consume of this class charges it (`customIncrTtlLuaScript` cannot
   * take part: the union rejects). On a cluster the keys must share a hash
   * slot (else it rejects with code `ERR_RATEKIT_FLEXIBLE_CROSS_SLOT`).
   */
  async _consumeAllOrNothing(entries: readonly AllOrNothingEntry[]): Promise<AllOrNothingAnswer> {
    for (const entry of entries) {
      checkPoints(entry.points);
      const limiter = entry.limiter as Partial<RateLimiterRedis>;
      if (limiter._incrTtlLuaScript !== undefined) {
        throw new Error('RateLimiterUnion (allOrNothing): a RateLimiterRedis with customIncrTtlLuaScript cannot take part in an all-or-nothing union (its script decides alone)');
      }
      if (!(limiter._isRedisReady?.(entry.rlKey, false) ?? true)) throw new Error('Redis connection is not ready');
    }
    const transport = this._transportOrThrow();
    // Operations asked before, waiting for their iteration's batch, go first: the union's call keeps its place.
    for (const entry of entries) (entry.limiter as Partial<RateLimiterRedis>)._sender?.flush();
    return this._bounded(consumeAllOrNothingOnRedis(transport, entries));
  }

  /**
   * Sends the operations waiting for their coalesced call now (before the
   * caller closes the client). The client is the caller's: it is not closed.
   */
  dispose(): void {
    this._sender?.flush();
  }

  _send(rlKey: string, op: OperationCode, points: string, seconds: string): Promise<unknown> {
    if (this._sender === undefined) return Promise.reject(new Error(UNKNOWN_CLIENT_MESSAGE));
    return this._bounded(this._sender.send(rlKey, op, points, seconds));
  }

  _bounded<T>(call: Promise<T>): Promise<T> {
    return withStoreTimeout(call, this._storeTimeoutMs, 'redis');
  }

  _transportOrThrow(): RedisTransport {
    if (this._transport === undefined) throw new Error(UNKNOWN_CLIENT_MESSAGE);
    return this._transport;
  }
}

/**
 * rlf's check of the points a Redis call adds or sets: a string must be a
 * positive integer's digits, a number an integer.
 * @throws {Error} rlf's messages
 */
function checkPoints(points: unknown): void {
  if (typeof points === 'string') {
    if (!/^[1-9][0-9]*$/.test(points)) throw new Error('Consuming string different than integer values is not supported by this package');
  } else if (!Number.isInteger(points)) {
    throw new Error('Consuming decimal number of points is not supported by this package');
  }
}
