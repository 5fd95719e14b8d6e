/**
 * How RateLimiterRedis talks to the client it is given: which library it is
 * (found from the client's shape, never from a flag: rate-limiter-flexible
 * recognised node-redis 4 by its constructor's name, `Commander`, and so
 * missed node-redis 5, whose constructor is named otherwise, rlf #314), how
 * to send a script, and whether it is ready.
 *
 * Every command RateLimiterRedis sends is one script call on one key or on
 * keys of one hash slot, so the client's own routing (ioredis `Cluster`,
 * node-redis `createCluster`, both libraries' Sentinel clients) sends it to
 * the right node: nothing here knows the topology. (On a node-redis cluster
 * the script goes through `sendCommand(firstKey, …)`: node-redis 4's cluster
 * routes `evalSha`/`eval` by no key at all, rlf #283.)
 *
 * Scripts go as EVALSHA; on `NOSCRIPT` (a new server, a restart, a failover
 * to a replica that never ran the script, `SCRIPT FLUSH`) as EVAL, which
 * also caches the script on that node for the next EVALSHA. So a client that
 * reconnects to another server carries on without a restart.
 */
import { RateKitOptionError } from '@ratekit/core';
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

/** One client, as RateLimiterRedis uses it. */
export interface RedisTransport {
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

/** Thrown (as a rejection) by a call on a client that is neither ioredis nor node-redis 4+. */
export const UNKNOWN_CLIENT_MESSAGE =
  'RateLimiterRedis: storeClient is not a Redis client @ratekit/flexible can use: give an ioredis client or Cluster, or a node-redis 4+ client, cluster or Sentinel client';

/**
 * Whether `client` is a node-redis 3 (or older) client: callback commands
 * (`send_command`) and no promise API. @ratekit/flexible does not support them:
 * rlf's `useRedis3AndLowerPackage`.
 */
export function isNodeRedis3(client: unknown): boolean {
  if (typeof client !== 'object' || client === null) return false;
  const c = client as Record<string, unknown>;
  return typeof c.send_command === 'function' && typeof c.evalSha !== 'function' && typeof c.defineCommand !== 'function';
}

/**
 * The error for node-redis 3 and older, given by `useRedis3AndLowerPackage: true`
 * or recognised from the client: a coded option error naming the option.
 */
export function redis3Unsupported(received: unknown): RateKitOptionError {
  return new RateKitOptionError(
    'useRedis3AndLowerPackage',
    'unset: @ratekit/flexible supports ioredis and node-redis 4 and later (node-redis 3 and older are not supported; upgrade the `redis` package or use ioredis)',
    received,
  );
}

/**
 * The transport for `client`, or undefined when it is neither an ioredis
 * client nor a node-redis 4+ client (RateLimiterRedis then rejects each call
 * with {@link UNKNOWN_CLIENT_MESSAGE}, as rlf's calls fail on such a client).
 */
export function redisTransport(client: unknown): RedisTransport | undefined {
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
  if (typeof c.evalsha === 'function' && typeof c.eval === 'function' && !isNodeRedis3(client)) {
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

/**
 * rlf's `rejectIfRedisNotReady` check, on the client's own state, in rlf's
 * order: ioredis `status === 'ready'`; node-redis 3 `isReady()`; node-redis
 * 4+ `isReady`; a node-redis cluster whose `_slots.getClient(key)` gives the
 * node's client (rlf's reading of node-redis 4 internals): open and that
 * client ready. Added: a node-redis 4/5 cluster without that internal is
 * ready when `isOpen`. Any other client counts as ready (its calls fail on
 * their own if it is not).
 */
export function isRedisReady(client: unknown, key: string, readonly: boolean): boolean {
  if (typeof client !== 'object' || client === null) return true;
  const c = client as Record<string, unknown>;
  if (c.status) return c.status === 'ready';
  if (typeof c.isReady === 'function') return (c.isReady as () => unknown).call(client) === true;
  if (typeof c.isReady === 'boolean') return c.isReady;
  const slots = c._slots as { getClient?: unknown } | null | undefined;
  if (typeof slots?.getClient === 'function') {
    if (typeof c.isOpen === 'boolean' && !c.isOpen) return false;
    try {
      const node = (slots.getClient as (key: string, readonly: boolean) => { isReady?: unknown } | undefined).call(slots, key, readonly);
      return node?.isReady === true;
    } catch {
      return false;
    }
  }
  if (typeof c.nodeClient === 'function' && typeof c.isOpen === 'boolean') return c.isOpen;
  return true;
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}
