import { RateKitError, withStoreTimeout } from '@ratekit/core';
import type { Driver, DriverAnswer } from './drivers.js';

/**
 * koa-ratelimit 6's Redis semantics (its driver is async-ratelimiter's),
 * in one script call per request: a sliding log in a sorted set per key,
 * one member per admitted request, whose score and member are the
 * request's time in ms with a fraction. The time is read from the Redis
 * server's clock (`TIME`), so instances with skewed clocks count one
 * client the same way; koa-ratelimit reads each instance's own clock, and
 * its members (ms, formatted by Lua) parse the same. Members older than
 * `duration` are dropped first; with `max` or more left the request is
 * refused and records nothing; otherwise it is added and the key's expiry
 * set to `duration`. Replies `{left before this request, reset in whole
 * epoch seconds (oldest member + duration, floored), max}`. The same keys,
 * members and expiries as koa-ratelimit, so old and new instances count
 * one client together during a rolling deploy.
 */
const SCRIPT = `
local key = KEYS[1]
local durationMs = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
redis.call('ZREMRANGEBYSCORE', key, 0, nowMs - durationMs)
local used = redis.call('ZCARD', key)
local oldestMs = nowMs
if used > 0 then
  oldestMs = tonumber(redis.call('ZRANGE', key, 0, 0)[1])
end
local resetSeconds = math.floor((oldestMs + durationMs) / 1000)
if used >= max then
  return {0, resetSeconds, max}
end
redis.call('ZADD', key, nowMs, string.format('%.3f', nowMs))
redis.call('PEXPIRE', key, durationMs)
return {max - used, resetSeconds, max}
`;

const COMMAND = 'ratekitKoaRatelimit';

/**
 * An ioredis client (`Redis` or `Cluster`), as the `'redis'` driver's `db`:
 * the driver defines its script with `defineCommand` and calls it, and
 * `resetKey` calls `del`.
 */
export interface IoRedisLike {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}

/** What the driver calls on the client once its command is defined. */
type Commands = Record<string, unknown> & { del(key: string): Promise<unknown> };

/** True when `db` looks like an ioredis client (it can define a script command). */
export function isIoRedis(db: unknown): db is IoRedisLike {
  return typeof db === 'object' && db !== null && typeof (db as { defineCommand?: unknown }).defineCommand === 'function';
}

type ScriptCommand = (key: string, durationMs: string, max: string) => Promise<[number, number, number]>;

/**
 * koa-ratelimit 6's Redis driver on an ioredis client (`db`), see
 * {@link SCRIPT}. Each call is bounded by `timeoutMs` (ratekit's addition:
 * upstream waits for ever): a call that has not answered by then rejects
 * with a `RateKitError` of code `ERR_RATEKIT_STORE`, as does a failing one
 * (its `cause` is Redis's error), and Koa answers the request with 500.
 */
export class RedisDriver implements Driver {
  readonly #redis: Commands;
  readonly #max: string;
  readonly #durationMs: string;
  readonly #timeoutMs: number;

  constructor(redis: IoRedisLike, max: number, durationMs: number, timeoutMs: number) {
    this.#redis = redis as unknown as Commands;
    this.#max = String(max);
    this.#durationMs = String(durationMs);
    this.#timeoutMs = timeoutMs;
    if (typeof this.#redis[COMMAND] !== 'function') redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: SCRIPT });
  }

  async get(key: string): Promise<DriverAnswer> {
    const command = this.#redis[COMMAND] as ScriptCommand;
    const [remaining, reset, total] = await this.#bounded(command.call(this.#redis, key, this.#durationMs, this.#max), 'count a request');
    return { remaining: Number(remaining), reset: Number(reset), total: Number(total) };
  }

  async reset(key: string): Promise<void> {
    await this.#bounded(this.#redis.del(key), 'reset a key');
  }

  /** `call`, bounded by `storeTimeoutMs`; a failure becomes a `RateKitError` of code `ERR_RATEKIT_STORE` with Redis's error as `cause`. */
  #bounded<T>(call: Promise<T>, what: string): Promise<T> {
    return withStoreTimeout(
      call.catch((error: unknown) => Promise.reject(storeError(what, error))),
      this.#timeoutMs,
      'Redis',
    );
  }
}

function storeError(what: string, error: unknown): RateKitError {
  return new RateKitError('ERR_RATEKIT_STORE', `Redis failed to ${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
