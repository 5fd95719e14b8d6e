/**
 * How a script reaches Redis, from the client the application gave as `redis`:
 * - an ioredis client (it has `defineCommand`) or a node-redis 4+ client (it has `evalSha`):
 *   `redisScriptTransport` of `@ratekit/redis` (TCP), EVALSHA then EVAL on `NOSCRIPT`;
 * - anything else with `evalsha(sha, keys, args)` and `eval(script, keys, args)`: an
 *   `@upstash/redis` client (HTTP) or a look-alike (Vercel KV), called as `@upstash/ratelimit`
 *   calls it: EVALSHA, then EVAL when the error's text holds `NOSCRIPT`.
 *
 * Either way a decision is one request (two the first time a server lacks the script).
 *
 * @module
 */
import { redisScriptTransport } from '@ratekit/redis/transport';
import type { LuaScript } from './scripts.js';

/** The part of an `@upstash/redis` client used here (`Redis` from `@upstash/redis`, any entry). */
export interface UpstashRedisLike {
  evalsha(sha1: string, keys: string[], args: unknown[]): Promise<unknown>;
  eval(script: string, keys: string[], args: unknown[]): Promise<unknown>;
}

/** Runs one script over `keys` and `args`, resolving with the reply as the client gives it. */
export type ScriptRunner = (script: LuaScript, keys: string[], args: string[]) => Promise<unknown>;

/**
 * The runner for `client`, or `undefined` when `client` is not a Redis client this package knows.
 *
 * @param client - the `redis` option: `@upstash/redis`, ioredis (also Cluster and Sentinel) or node-redis 4+.
 */
export function scriptRunner(client: unknown): ScriptRunner | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Record<string, unknown>;
  if (isTcpClient(client)) {
    const transport = redisScriptTransport(client);
    if (transport === undefined) return undefined;
    return (script, keys, args) => transport.run(script.script, script.sha, keys, args);
  }
  // `evalsha` is not read here: @upstash/ratelimit reads it only to call it, and its tests count the reads.
  if (typeof c.eval === 'function') {
    const upstash = client as unknown as UpstashRedisLike;
    return async (script, keys, args) => {
      try {
        return await upstash.evalsha(script.sha, keys, args);
      } catch (error) {
        // The incumbent's test: `${error}`.includes('NOSCRIPT') (single commands and auto-pipelines).
        if (!String(error).includes('NOSCRIPT')) throw error;
        return upstash.eval(script.script, keys, args);
      }
    };
  }
  return undefined;
}

/** Whether `client` is an ioredis client (it has `defineCommand`) or a node-redis 4+ client (it has `evalSha`): a TCP client. */
export function isTcpClient(client: unknown): boolean {
  if (typeof client !== 'object' || client === null) return false;
  const c = client as Record<string, unknown>;
  return typeof c.evalSha === 'function' || typeof c.defineCommand === 'function';
}

/** The runner for `client`, found on first use; an unknown client rejects every call, as the incumbent fails on its first. */
export function lazyRunner(client: unknown): ScriptRunner {
  let runner: ScriptRunner | undefined;
  return (script, keys, args) => {
    runner ??= scriptRunner(client);
    if (runner === undefined) {
      return Promise.reject(new TypeError('redis: expected an @upstash/redis client, an ioredis client or a node-redis 4+ client'));
    }
    return runner(script, keys, args);
  };
}
