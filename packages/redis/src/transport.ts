/**
 * The script transport of @ratekit/redis, exported so that any package that
 * keeps its own Lua (rate-limiter-flexible's layout in @ratekit/flexible, for
 * one) sends it the way this package sends its own: which library a client is
 * (found from the client's shape, never from a flag, so node-redis 5 is
 * recognised, rate-limiter-flexible #314), and one script call with EVALSHA,
 * then EVAL on `NOSCRIPT`.
 *
 * A call is one script on one key or on keys of one hash slot, so the
 * client's own routing (ioredis `Cluster`, node-redis `createCluster`, both
 * libraries' Sentinel clients) sends it to the right node. On a node-redis
 * cluster the script goes through `sendCommand(firstKey, ...)`: node-redis 4's
 * cluster routes `evalSha`/`eval` by no key at all (rate-limiter-flexible #283).
 *
 * EVAL on `NOSCRIPT` (a new server, a restart, a failover to a replica that
 * never ran the script, `SCRIPT FLUSH`) also caches the script on that node
 * for the next EVALSHA, so a client that reconnects to another server carries
 * on without a restart.
 *
 * @module
 */
import calculateSlot from 'cluster-key-slot';

/** The part of a node-redis 4+ client (`createClient`, `createCluster`, v5 `createSentinel`) used here. */
interface NodeRedisLike {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The part of an ioredis client (`new Redis()`, with `sentinels` too, or `new Cluster()`) used here. */
interface IoRedisLike {
  evalsha(sha1: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
}

/** One client, as a script transport. */
export interface RedisScriptTransport {
  /** The library, from the client's shape. */
  readonly library: 'ioredis' | 'node-redis';
  /** Whether the client is a cluster's (its commands are routed by key, and one call's keys must share a slot). */
  readonly cluster: boolean;
  /**
   * The hash slot a key lands on, as the cluster computes it (with ioredis's
   * own `keyPrefix` option in front, which ioredis adds to every key it sends);
   * undefined for a client that is not a cluster's.
   */
  readonly slotOf: ((key: string) => number) | undefined;
  /**
   * Whether the client writes each command to the socket when it is sent
   * (ioredis without `enableAutoPipelining`), rather than an iteration's
   * commands together (node-redis): see core's `batchesInFlight`.
   */
  readonly writesEachCommand: boolean;
  /** EVALSHA `sha` over `keys` and `args`; EVAL `script` on NOSCRIPT. */
  run(script: string, sha: string, keys: string[], args: string[]): Promise<unknown>;
}

/** A node-redis 3 (or older) client: callback commands (`send_command`) and no promise API. */
function isNodeRedis3(c: Record<string, unknown>): boolean {
  return typeof c.send_command === 'function' && typeof c.evalSha !== 'function' && typeof c.defineCommand !== 'function';
}

/**
 * The script transport over `client`: an ioredis client, Cluster or Sentinel
 * client, or a node-redis 4+ client, cluster or Sentinel client.
 *
 * @param client - the application's connected (or connecting) client.
 * @returns the transport, or `undefined` when `client` is none of these
 *   (node-redis 3 and older included): the caller chooses its own error.
 * `run` rejects with the client's own error (a connection error, a script
 * error), after the EVAL when EVALSHA failed with `NOSCRIPT`.
 *
 * @example
 * ```ts
 * import { redisScriptTransport } from '@ratekit/redis';
 * const transport = redisScriptTransport(client);
 * const reply = await transport?.run(SCRIPT, SCRIPT_SHA1, ['{user:1}'], ['1000']);
 * ```
 */
export function redisScriptTransport(client: unknown): RedisScriptTransport | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Record<string, unknown>;
  if (typeof c.evalSha === 'function' && typeof c.eval === 'function') {
    const nodeRedis = client as NodeRedisLike;
    // A node-redis cluster (4 and 5) has nodeClient.
    const cluster = typeof c.nodeClient === 'function' && typeof c.sendCommand === 'function';
    if (cluster) {
      // node-redis 4's cluster does not route evalSha/eval by their keys (it reads the first key from
      // the wrong argument, so the call goes to any node, and MOVED sends it to any node again: rlf
      // #283); its sendCommand(firstKey, isReadonly, args) routes by the key given, in 4 and 5.
      const sendCommand = (c.sendCommand as (firstKey: string, isReadonly: boolean, args: string[]) => Promise<unknown>).bind(client);
      return {
        library: 'node-redis',
        cluster,
        slotOf: calculateSlot,
        writesEachCommand: false,
        run: (script, sha, keys, args) =>
          sendCommand(keys[0]!, false, ['EVALSHA', sha, String(keys.length), ...keys, ...args]).catch((error: unknown) => {
            if (!isNoScript(error)) throw error;
            return sendCommand(keys[0]!, false, ['EVAL', script, String(keys.length), ...keys, ...args]);
          }),
      };
    }
    return {
      library: 'node-redis',
      cluster,
      slotOf: undefined,
      writesEachCommand: false,
      run: (script, sha, keys, args) => {
        const command = { keys, arguments: args };
        return nodeRedis.evalSha(sha, command).catch((error: unknown) => {
          if (!isNoScript(error)) throw error;
          return nodeRedis.eval(script, command);
        });
      },
    };
  }
  if (typeof c.evalsha === 'function' && typeof c.eval === 'function' && !isNodeRedis3(c)) {
    const ioredis = client as IoRedisLike;
    // An ioredis Cluster has nodes(); its options (keyPrefix, enableAutoPipelining) are on `options`.
    const cluster = typeof c.nodes === 'function';
    const options = (c.options ?? {}) as { keyPrefix?: unknown; enableAutoPipelining?: unknown };
    const keyPrefix = typeof options.keyPrefix === 'string' ? options.keyPrefix : '';
    return {
      library: 'ioredis',
      cluster,
      slotOf: cluster ? (key) => calculateSlot(keyPrefix + key) : undefined,
      writesEachCommand: options.enableAutoPipelining !== true,
      run: (script, sha, keys, args) =>
        ioredis.evalsha(sha, keys.length, ...keys, ...args).catch((error: unknown) => {
          if (!isNoScript(error)) throw error;
          return ioredis.eval(script, keys.length, ...keys, ...args);
        }),
    };
  }
  return undefined;
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

export { batchScript, scriptBatcher } from './script-batch.js';
export { upstashScriptRun } from './upstash-transport.js';
export type { UpstashScriptClient } from './upstash-transport.js';
export type { ScriptBatcher } from './script-batch.js';
