import type { FastifyRateLimitOptions, FastifyRateLimitStore, StoreCallback, StoreChildOptions } from './store-contract.js';

/** @fastify/rate-limit's default `nameSpace`: the prefix of every key it writes. */
export const DEFAULT_NAMESPACE = 'fastify-rate-limit-';

/**
 * One hit, in one round trip, on the server's clock: a counter per key
 * (`INCR`) whose expiry (`PEXPIRE`) is set by the first hit of a window, by
 * every over-limit hit with `continueExceeding`, and to
 * `timeWindow × 2^(hits − max − 1)` by every over-limit hit with
 * `exponentialBackoff`. The same keys, values and expiries as
 * @fastify/rate-limit 11's Redis store, so both can count one client.
 * Replies `{hits, ms until the counter expires}`.
 */
const INCR_SCRIPT = `
local key = KEYS[1]
local windowMs = tonumber(ARGV[1])             -- timeWindow, ms
local max = tonumber(ARGV[2])                  -- hits allowed per window
local continueExceeding = ARGV[3] == 'true'
local exponentialBackoff = ARGV[4] == 'true'
local hits = redis.call('INCR', key)
if hits == 1 or (continueExceeding and hits > max) then
  redis.call('PEXPIRE', key, windowMs)
  return {hits, windowMs}
end
if exponentialBackoff and hits > max then
  local ttl = math.min(windowMs * 2 ^ (hits - max - 1), 9007199254740991)
  redis.call('PEXPIRE', key, string.format('%d', ttl))
  return {hits, ttl}
end
return {hits, redis.call('PTTL', key)}
`;

/** The count and the ms left, without counting; `{0, 0}` for no (or no expiring) counter. */
const READ_SCRIPT = `
local hits = redis.call('GET', KEYS[1])
if not hits then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(hits), ttl}
`;

/** The part of an ioredis client this store uses: `defineCommand`, and the commands it defines. */
export interface IoRedisLike {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  [command: string]: unknown;
}

type ScriptCommand = (key: string, ...args: [...string[], (error: Error | null, reply?: [number, number]) => void]) => void;

const INCR_COMMAND = 'ratekitFastifyRateLimitIncr';
const READ_COMMAND = 'ratekitFastifyRateLimitRead';

/**
 * The store behind @fastify/rate-limit's `redis` option (an ioredis client),
 * with its semantics and key names: `<nameSpace><key>` for the plugin's
 * limiter and `<nameSpace><method><url>-<key>` for a route's own (the
 * route's `routeInfo`), so that during a rolling deploy old and new
 * instances share one count per client. One script call per hit, on the
 * Redis server's clock; works on Redis Cluster (one key per call).
 */
export class RedisStore implements FastifyRateLimitStore {
  readonly #redis: IoRedisLike;
  readonly #prefix: string;
  readonly #continueExceeding: string;
  readonly #exponentialBackoff: string;

  constructor(options: FastifyRateLimitOptions, redis: IoRedisLike, prefix: string = DEFAULT_NAMESPACE) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#continueExceeding = String(options.continueExceeding === true);
    this.#exponentialBackoff = String(options.exponentialBackoff === true);
    if (typeof redis[INCR_COMMAND] !== 'function') redis.defineCommand(INCR_COMMAND, { numberOfKeys: 1, lua: INCR_SCRIPT });
    if (typeof redis[READ_COMMAND] !== 'function') redis.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_SCRIPT });
  }

  incr(key: string, callback: StoreCallback, timeWindow: number, max: number): void {
    const command = this.#redis[INCR_COMMAND] as ScriptCommand;
    command.call(this.#redis, this.#prefix + key, String(timeWindow), String(max), this.#continueExceeding, this.#exponentialBackoff, reply(callback));
  }

  read(key: string, callback: StoreCallback): void {
    const command = this.#redis[READ_COMMAND] as ScriptCommand;
    command.call(this.#redis, this.#prefix + key, reply(callback));
  }

  child(routeOptions: StoreChildOptions): RedisStore {
    const { method, url } = 'routeInfo' in routeOptions ? routeOptions.routeInfo : routeOptions;
    return new RedisStore(routeOptions as FastifyRateLimitOptions, this.#redis, `${this.#prefix}${String(method)}${String(url)}-`);
  }
}

function reply(callback: StoreCallback): (error: Error | null, result?: [number, number]) => void {
  return (error, result) => {
    if (error) callback(error);
    else callback(null, { current: Number(result![0]), ttl: Number(result![1]) });
  };
}
