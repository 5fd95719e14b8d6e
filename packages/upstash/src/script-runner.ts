/**
 * How a script reaches Redis, from the client the application gave as `redis`:
 * - an ioredis client (it has `defineCommand`) or a node-redis 4+ client (it has `evalSha`):
 *   `redisScriptTransport` of `@ratekit/redis` (TCP), EVALSHA then EVAL on `NOSCRIPT`, the
 *   package's scripts coalesced by its `scriptBatcher`: the calls asked in one iteration of the
 *   event loop go as one call (one per hash slot on a cluster), each with the very code it runs
 *   alone, in the order asked, so coalescing never changes a reply (the rule, and its proof, are in
 *   `@ratekit/redis`'s script-batch.ts; `coalesce: false` turns it off);
 * - anything else with `evalsha(sha, keys, args)` and `eval(script, keys, args)`: an
 *   `@upstash/redis` client (HTTP) or a look-alike (Vercel KV), called as `@upstash/ratelimit`
 *   calls it: EVALSHA, then EVAL when the error's text holds `NOSCRIPT`.
 *
 * Either way a decision is one request or one round trip (two the first time a server lacks the script).
 *
 * @module
 */
import type { CoalescingOptions } from '@ratekit/core';
import { redisScriptTransport, scriptBatcher, type UpstashScriptClient, upstashScriptRun } from '@ratekit/redis/transport';
import { type LuaScript, SCRIPTS } from './scripts.js';

/** The package's own scripts, batched together on TCP (a script of another module goes alone). */
const BATCHED = Object.values(SCRIPTS).map((lua) => lua.script);
const IS_BATCHED = new Set(BATCHED);

/** Runs one script over `keys` and `args`, resolving with the reply as the client gives it. */
export type ScriptRunner = (script: LuaScript, keys: string[], args: string[]) => Promise<unknown>;

/**
 * The runner for `client`, or `undefined` when `client` is not a Redis client this package knows.
 *
 * @param client - the `redis` option: `@upstash/redis`, ioredis (also Cluster and Sentinel) or node-redis 4+.
 * @param coalescing - for a TCP client: `@ratekit/redis`'s coalescing options (`coalesce`, default true).
 */
export function scriptRunner(client: unknown, coalescing: CoalescingOptions = {}): ScriptRunner | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Record<string, unknown>;
  if (isTcpClient(client)) {
    const transport = redisScriptTransport(client);
    if (transport === undefined) return undefined;
    const batcher = scriptBatcher(transport, BATCHED, coalescing);
    return (script, keys, args) => (IS_BATCHED.has(script.script) ? batcher.run(script.script, keys, args) : transport.run(script.script, script.sha, keys, args));
  }
  // `evalsha` is not read here: @upstash/ratelimit reads it only to call it, and its tests count the reads.
  if (typeof c.eval === 'function') {
    const send = upstashScriptRun(client as unknown as UpstashScriptClient);
    return (script, keys, args) => send(script.script, script.sha, keys, args);
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
export function lazyRunner(client: unknown, coalescing: CoalescingOptions = {}): ScriptRunner {
  let runner: ScriptRunner | undefined;
  return (script, keys, args) => {
    runner ??= scriptRunner(client, coalescing);
    if (runner === undefined) {
      return Promise.reject(new TypeError('redis: expected an @upstash/redis client, an ioredis client or a node-redis 4+ client'));
    }
    return runner(script, keys, args);
  };
}
