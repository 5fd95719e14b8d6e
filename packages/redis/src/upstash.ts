/**
 * @ratekit/redis/upstash: the Redis store over Upstash's HTTP (REST) API, for runtimes without TCP
 * sockets (Cloudflare Workers, Vercel Edge, Deno Deploy) or where HTTP is preferred.
 *
 * The rule: a decision is the very same Lua as `@ratekit/redis` sends over TCP (`lua.ts`), with the
 * same keys and argument and the same reply decoding (`protocol.ts`), so every algorithm and
 * multi-limit policy stays one atomic call, now one HTTP request. It is safe to mix with the TCP
 * store on one database: both write the same layout. This entry imports no Node module (no
 * `node:crypto`: the script's SHA-1 comes from Web Crypto, once; no `Buffer`; no cluster-slot code),
 * and starts no timer.
 *
 * @module
 */
import { upstashScriptRun } from './upstash-transport.js';
import { assertObject, assertOneOf, type Decision, type EvaluateRequest, RateKitError, RateKitOptionError, type RateLimitStore, type ResolvedLimit } from '@ratekit/core';
import { DECISION_SCRIPT } from './lua.js';
import { decisionProtocol } from './protocol.js';

const STORE_NAME = 'upstash';

/**
 * The part of an `@upstash/redis` client (`new Redis({ url, token })`, `Redis.fromEnv()`, from
 * `@upstash/redis`, `@upstash/redis/cloudflare` or `@upstash/redis/fastly`) the store uses. Any
 * object with these three methods works, e.g. a Vercel KV client.
 */
export interface UpstashRedisLike {
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  del(...keys: string[]): Promise<unknown>;
}

/** Options of {@link upstashStore}. */
export interface UpstashStoreOptions {
  /**
   * The `@upstash/redis` client, owned by the caller. Its own retries (`retry`, 5 by default, with
   * backoff) happen inside one store call; the limiter's `storeTimeoutMs` bounds the whole call.
   * With `enableAutoPipelining: true` the client sends the decisions of one tick in one `/pipeline`
   * request (each still atomic; the pipeline as a whole is not).
   */
  redis: UpstashRedisLike;
  /**
   * Prepended to every key the store writes, as in `@ratekit/redis` (the same default, so both
   * stores share state on one database). Must not contain `{` or `}`.
   * @default 'ratekit:'
   */
  prefix?: string;
  /**
   * Whose clock decides: `server` (default), Redis `TIME` inside the script, so every edge location
   * and isolate agrees (and Workers' clock, which stands still while a request computes, does not
   * matter); `caller`: the limiter's `now`, for tests on fixed clocks.
   * @default 'server'
   */
  clock?: 'server' | 'caller';
}

/** The Upstash store. */
export interface UpstashStore extends RateLimitStore {
  /** Always asynchronous: one HTTP request per decision (two on the first after the server lost the script). */
  evaluate(request: EvaluateRequest): Promise<Decision>;
  /** Deletes `key`'s state in `namespace` in one `DEL` (pass the policy's `limits` on the server clock; the limiter's `reset` does). */
  resetKey(key: string, namespace: string, limits?: readonly ResolvedLimit[]): Promise<void>;
  /** The prefix of every key, as configured. */
  readonly prefix: string;
  /** The hash holding `key`'s states in `namespace`, as `@ratekit/redis` names it. For inspection and tests. */
  keyFor(key: string, namespace: string): string;
  /** Every Redis key a decision of `limits` on `key` in `namespace` touches, as `@ratekit/redis` names them. */
  keysFor(key: string, namespace: string, limits: readonly ResolvedLimit[]): string[];
}

/**
 * A store on Upstash Redis (or any server speaking Upstash's REST protocol), through
 * `@upstash/redis`: every decision, with any algorithm and any number of limits, is one EVALSHA
 * of `@ratekit/redis`'s decision script, falling back to EVAL when the server does not have the
 * script cached (a new database, a restart, `SCRIPT FLUSH`), which caches it for the next.
 *
 * The keys, the expiry layout, the server clock and the TTLs are `@ratekit/redis`'s (see its
 * README): a TCP client and an HTTP client can limit the same keys together. There is no
 * coalescing (the TCP store batches decisions per turn of the event loop; over HTTP, the client's
 * `enableAutoPipelining` does the same in one request).
 *
 * Failures: a failed request (HTTP error, a Redis error such as a key of the wrong type, a reply
 * that cannot be read) rejects with a `RateKitError` of code `ERR_RATEKIT_STORE`, its `cause` the
 * client's error; the limiter's `onStoreError` decides what the request gets, and its
 * `storeTimeoutMs` bounds a request that hangs.
 *
 * @throws {RateKitOptionError} when `redis` lacks `evalsha`, `eval` or `del`, `prefix` is not a string without `{`/`}`, or `clock` is not `'server'` or `'caller'`.
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis/cloudflare';
 * import { createLimiter } from '@ratekit/core';
 * import { upstashStore } from '@ratekit/redis/upstash';
 *
 * const limiter = createLimiter({
 *   limits: [{ algorithm: 'sliding-window', limit: 10, windowMs: 10_000 }],
 *   store: upstashStore({ redis: Redis.fromEnv(env) }),
 *   onStoreError: 'allow',
 *   storeTimeoutMs: 1_000,
 * });
 * const decision = await limiter.consume(clientIp);
 * ```
 */
export function upstashStore(options: UpstashStoreOptions): UpstashStore {
  assertObject('options', options);
  const redis = options.redis as Partial<UpstashRedisLike> | null | undefined;
  if (typeof redis !== 'object' || redis === null || typeof redis.evalsha !== 'function' || typeof redis.eval !== 'function' || typeof redis.del !== 'function') {
    throw new RateKitOptionError('redis', 'an @upstash/redis client (with evalsha, eval and del)', options.redis);
  }
  const client = options.redis;
  const prefix = options.prefix ?? 'ratekit:';
  if (typeof prefix !== 'string' || prefix.includes('{') || prefix.includes('}')) {
    throw new RateKitOptionError('prefix', 'a string without `{` or `}`', prefix);
  }
  const clock = options.clock ?? 'server';
  assertOneOf('clock', clock, ['server', 'caller'] as const);
  const protocol = decisionProtocol(prefix, clock);

  const send = upstashScriptRun(client);
  const run = (keys: string[], argument: string): Promise<unknown> => scriptSha().then((sha) => send(DECISION_SCRIPT, sha, keys, [argument]));

  return {
    name: STORE_NAME,
    shared: true,
    clock,
    prefix,
    keyFor: protocol.keyFor,
    keysFor: protocol.keysFor,
    evaluate(request) {
      let encoded: { keys: string[]; argument: string };
      try {
        encoded = protocol.encode(request);
      } catch (error) {
        return Promise.reject(storeError('could not encode the decision', error));
      }
      return run(encoded.keys, encoded.argument).then(
        (reply) => {
          try {
            return protocol.decode(reply, request);
          } catch (error) {
            throw storeError('sent a reply the store cannot use', error);
          }
        },
        (error: unknown) => {
          throw storeError('request failed', error);
        },
      );
    },
    async resetKey(key, namespace, limits) {
      try {
        await client.del(...protocol.resetKeysFor(key, namespace, limits));
      } catch (error) {
        throw storeError('DEL failed', error);
      }
    },
  };
}

/** A store failure, coded for the limiter's `onStoreError`; the client's error is its `cause`. */
function storeError(what: string, cause: unknown): RateKitError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new RateKitError('ERR_RATEKIT_STORE', `The upstash store's ${what}: ${message}`, { cause });
}

let shaPromise: Promise<string> | undefined;

/** SHA-1 of the decision script, hex, computed once with Web Crypto (every supported runtime has `crypto.subtle`). */
export function scriptSha(): Promise<string> {
  if (shaPromise === undefined) {
    const subtle = (globalThis as { crypto?: { subtle?: { digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer> } } }).crypto?.subtle;
    if (subtle === undefined) return Promise.reject(new Error('Web Crypto (globalThis.crypto.subtle) is not available: it computes the script SHA-1 for EVALSHA'));
    shaPromise = subtle.digest('SHA-1', new TextEncoder().encode(DECISION_SCRIPT)).then((digest) => {
      let hex = '';
      for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0');
      return hex;
    });
    // A failed digest is not kept: the next decision tries again.
    shaPromise.catch(() => {
      shaPromise = undefined;
    });
  }
  return shaPromise;
}
