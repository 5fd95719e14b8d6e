/**
 * hono-rate-limiter's `RedisStore`: a fixed window per key in Redis, through
 * an Upstash-shaped client (`@upstash/redis`'s `Redis`, or anything with
 * `scriptLoad`, `evalsha`, `decr` and `del`). Same options (`client`,
 * `prefix` default `hrl:`, `resetExpiryOnChange`), same keys and values as
 * hono-rate-limiter 0.5.4, so both can serve one Redis during a migration.
 *
 * The scripts are loaded once (SCRIPT LOAD) when the store is built; a call
 * answered with an error (NOSCRIPT after a Redis restart, say) loads its
 * script again and retries once, as upstream. Each call is one round trip.
 *
 * @module
 */
import type { Env, Input } from 'hono';
import { SCRIPTS } from './redis-scripts.js';
import type { ClientRateLimitInfo, HonoConfigType, Store } from './types.js';

/** A reply value as the Upstash client decodes it. */
export type RedisReply = boolean | number | string | null | (boolean | number | string | null)[];

/** The client surface the store uses: `@upstash/redis`'s `Redis` has it. */
export interface RedisClient {
  scriptLoad: (script: string) => Promise<string>;
  evalsha: <TArgs extends unknown[], TData = unknown>(sha1: string, keys: string[], args: TArgs) => Promise<TData>;
  decr: (key: string) => Promise<number>;
  del: (key: string) => Promise<number>;
}

/** {@link RedisStore}'s options (hono-rate-limiter's `Options`). */
export interface Options {
  client: RedisClient;
  /** Put before every key. @default 'hrl:' */
  readonly prefix?: string;
  /** Restart a key's expiry on every hit (a window that slides while hits keep coming). @default false */
  readonly resetExpiryOnChange?: boolean;
}

type ScriptName = keyof typeof SCRIPTS;

/**
 * hono-rate-limiter 0.5.4's Redis store, on Upstash's HTTP Redis (or any
 * client with its surface).
 *
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis';
 * import { rateLimiter, RedisStore } from '@ratekit/hono';
 *
 * const store = new RedisStore({ client: Redis.fromEnv() });
 * app.use(rateLimiter({ keyGenerator: (c) => c.req.header('x-api-key') ?? '', store }));
 * ```
 * @see https://github.com/rhinobase/hono-rate-limiter (its `RedisStore`: options, key layout)
 */
export class RedisStore<E extends Env = Env, P extends string = string, I extends Input = Input> implements Store<E, P, I> {
  readonly client: RedisClient;
  readonly prefix: string;
  readonly resetExpiryOnChange: boolean;
  /** The window, ms, from the middleware's options (`init`). */
  windowMs = 60_000;
  readonly #shas = new Map<ScriptName, Promise<string>>();

  constructor(options: Options) {
    this.client = options.client;
    this.prefix = options.prefix ?? 'hrl:';
    this.resetExpiryOnChange = options.resetExpiryOnChange ?? false;
    for (const name of Object.keys(SCRIPTS) as ScriptName[]) void this.#load(name);
  }

  /** Takes the window from the middleware's options. */
  init(options: Pick<HonoConfigType<E, P, I>, 'windowMs'>): void {
    this.windowMs = options.windowMs;
  }

  /** The key's hits and window end. A key not held answers `{ totalHits: 0 }` with a `resetTime` in the past, as upstream. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return parseReply(await this.#run('get', key, [], false));
  }

  /** Counts one hit; the first hit of a window sets the key to expire after `windowMs`. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    return parseReply(await this.#run('increment', key, [this.resetExpiryOnChange ? '1' : '0', String(this.windowMs)], true));
  }

  /** Takes one hit back, never below zero, leaving the expiry alone. */
  async decrement(key: string): Promise<void> {
    await this.#run('decrement', key, [], true);
  }

  /** Forgets the key. */
  async resetKey(key: string): Promise<void> {
    await this.client.del(this.prefix + key);
  }

  #load(name: ScriptName): Promise<string> {
    const sha = this.client.scriptLoad(SCRIPTS[name]).then((result: unknown) => {
      if (typeof result !== 'string') throw new TypeError('unexpected reply from redis client');
      return result;
    });
    // A failed load is reported by the call that awaits it, not as an unhandled rejection.
    sha.catch(() => undefined);
    this.#shas.set(name, sha);
    return sha;
  }

  async #run(name: ScriptName, key: string, args: string[], retry: boolean): Promise<unknown> {
    const call = async () => this.client.evalsha(await this.#shas.get(name)!, [this.prefix + key], args);
    if (!retry) return call();
    try {
      return await call();
    } catch {
      void this.#load(name);
      return call();
    }
  }
}

/** `{ hits, ms to expiry }` → the store's record; the reset is read on this host's clock, as upstream. */
function parseReply(reply: unknown): ClientRateLimitInfo {
  if (!Array.isArray(reply)) throw new TypeError('Expected result to be array of values');
  if (reply.length !== 2) throw new Error(`Expected 2 replies, got ${reply.length}`);
  const [hits, ttl] = reply as unknown[];
  return { totalHits: hits === false || hits === null ? 0 : toInt(hits), resetTime: new Date(Date.now() + toInt(ttl)) };
}

function toInt(value: unknown): number {
  return typeof value === 'number' ? value : Number.parseInt(typeof value === 'string' ? value : '', 10);
}
