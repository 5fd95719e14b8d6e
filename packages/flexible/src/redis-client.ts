/**
 * How RateLimiterRedis talks to the client it is given: through
 * @ratekit/redis's script transport (`redisScriptTransport`: the library
 * found from the client's shape, EVALSHA then EVAL on `NOSCRIPT`, routing by
 * the first key on a cluster), plus what is rlf's own: node-redis 3's error
 * and rlf's readiness check.
 */
import { RateKitOptionError } from '@ratekit/core';

export type { RedisScriptTransport as RedisTransport } from '@ratekit/redis';

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
 * The transport for `client`: @ratekit/redis's, or undefined when `client` is
 * neither an ioredis client nor a node-redis 4+ client (RateLimiterRedis then
 * rejects each call with {@link UNKNOWN_CLIENT_MESSAGE}, as rlf's calls fail
 * on such a client).
 */
export { redisScriptTransport as redisTransport } from '@ratekit/redis';

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
