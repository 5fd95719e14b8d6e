// The contenders of the store part: which client, which call, which limits.
//
// Every contender runs in its own child process with its own connection
// (lib/store-worker.mjs). The reference on each client is the least a Redis
// limiter can do in one atomic round trip: EVALSHA of a script that INCRs
// one key (bench/notes/method.md §4).

import { createLimiter } from '@ratekit/core';
import { redisStore } from '@ratekit/redis';
import Redis from 'ioredis';
import { createRequire } from 'node:module';
import { RateLimiterRedis as FlexibleDropInRedis } from '@ratekit/flexible';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { createClient } from 'redis';

const HOUR_MS = 3_600_000;
const require = createRequire(import.meta.url);

/**
 * The limits. None is reached in a run, and every decision changes the stored
 * state, so each one takes the admit-and-write path. A quota of 1e12 per hour
 * (the in-memory part's) would break the second point for GCRA: its emission
 * interval would be 3.6e-6 ms, below the resolution of a double near
 * 1.8e12 ms (2.4e-4 ms), so the TAT would not move and the script would skip
 * its write. 1e9 per hour gives 3.6e-3 ms, and would take 277k decisions per
 * second on one key to be reached.
 */
export const LIMIT = 1e9;

/** The client libraries, each with the settings a user would pick for 50 requests in flight. */
export const CLIENTS = [
  { id: 'node-redis', label: 'node-redis', what: 'createClient() (pipelines commands of one tick by itself)' },
  { id: 'ioredis', label: 'ioredis', what: 'new Redis() (enableAutoPipelining off, the default)' },
  { id: 'ioredis-ap', label: 'ioredis, auto-pipelining', what: 'new Redis({ enableAutoPipelining: true })' },
];

/** The reference script, as in bench/notes/method.md §4. */
export const TRIVIAL_SCRIPT = "return redis.call('INCR', KEYS[1])";

/** The two-limit policy of the `policy` variant and its twin. */
const POLICY_LIMITS = [
  // 1e6 per second: an emission interval of 1e-3 ms, which moves the TAT (see LIMIT).
  { algorithm: 'gcra', limit: 1e6, windowMs: 1_000, name: 'second' },
  { algorithm: 'fixed-window', limit: LIMIT, windowMs: HOUR_MS, name: 'hour' },
];

const LIMITER_CALL = 'createLimiter({ limits, store: redisStore({ client }) }).consume(key)'; // coalescing on (the default)

/**
 * What runs on each client. `default`: part of a run without `--variants`.
 * `peer`: an incumbent, whose ratio ours must beat. `idleKeysExpire`: the
 * state is worth nothing soon after a decision (a bucket far from its limit
 * is full again), so the store lets an idle key expire about 2 s later
 * (its TTL slack plus headroom): the key count at the end may be lower.
 */
export const VARIANTS = [
  { id: 'baseline', label: 'trivial EVALSHA', what: `EVALSHA \`${TRIVIAL_SCRIPT}\``, reference: true, default: true },
  { id: 'gcra', label: 'ratekit gcra', what: LIMITER_CALL, limits: { algorithm: 'gcra', limit: LIMIT, windowMs: HOUR_MS }, default: true, idleKeysExpire: true },
  { id: 'fixed-window', label: 'ratekit fixed-window', what: LIMITER_CALL, limits: { algorithm: 'fixed-window', limit: LIMIT, windowMs: HOUR_MS }, default: true },
  // The same store with coalescing off: one call per decision, as before issue 26. The coalescing
  // table compares the two (decisions per second, Redis CPU, a lone decision's latency).
  loneTwin('fixed-window', { default: true }),
  loneTwin('gcra', { default: true, idleKeysExpire: true }),
  // T = 1 ms, tau = 3.6e6 ms: whole ms, so @ratekit/redis keeps it in the expiry layout (gcra above,
  // T = 0.0036 ms, stays in the hash). Not reached in a run: 3.6e6 decisions on one key.
  { id: 'gcra-1ms', label: 'ratekit gcra, T = 1 ms', what: LIMITER_CALL, limits: { algorithm: 'gcra', limit: 3.6e6, windowMs: HOUR_MS }, idleKeysExpire: true },
  { id: 'sliding-window', label: 'ratekit sliding-window', what: LIMITER_CALL, limits: { algorithm: 'sliding-window', limit: LIMIT, windowMs: HOUR_MS } },
  { id: 'token-bucket', label: 'ratekit token-bucket', what: LIMITER_CALL, limits: { algorithm: 'token-bucket', limit: LIMIT, windowMs: HOUR_MS }, idleKeysExpire: true },
  { id: 'delay', label: 'ratekit delay', what: LIMITER_CALL, limits: { algorithm: 'delay', limit: LIMIT, windowMs: HOUR_MS }, idleKeysExpire: true },
  // A 10 ms window, as in the in-memory part: see SLIDING_LOG_WINDOW_MS in lib/limiters.mjs.
  { id: 'sliding-log', label: 'ratekit sliding-log (10 ms)', what: LIMITER_CALL, limits: { algorithm: 'sliding-log', limit: LIMIT, windowMs: 10 }, idleKeysExpire: true },
  {
    id: 'policy',
    label: 'ratekit policy: gcra/s + fixed-window/h',
    what: LIMITER_CALL,
    limits: POLICY_LIMITS,
    default: true,
  },
  loneTwin('policy', { default: true }),
  {
    id: 'gcra-store',
    label: 'ratekit gcra, store only',
    what: 'redisStore({ client }).evaluate(request): no limiter around it (diagnostic)',
    limits: { algorithm: 'gcra', limit: LIMIT, windowMs: HOUR_MS },
    storeOnly: true,
    idleKeysExpire: true,
  },
  {
    // The bench's prefix, 130 bytes longer: its requests (about 360 bytes, as rate-limiter-flexible's
    // EVAL with the script's text) no longer fit 50 to a 16 KB read of Redis, so its in-flight batch
    // splits in two as that peer's does. The same store otherwise: the difference from
    // `fixed-window` is what that split alone is worth in this harness (README, "Fixed window on node-redis").
    id: 'fixed-window-long-prefix',
    label: 'ratekit fixed-window, prefix 130 bytes longer',
    what: `${LIMITER_CALL}, prefix padded by 130 bytes (diagnostic)`,
    limits: { algorithm: 'fixed-window', limit: LIMIT, windowMs: HOUR_MS },
    prefixPadBytes: 130,
  },
  {
    // The store on a client that cannot send FCALL, as on Redis < 7 or where FUNCTION LOAD is refused: the script form.
    id: 'fixed-window-script',
    label: 'ratekit fixed-window, script form (EVALSHA)',
    what: `${LIMITER_CALL}, on a client without FCALL (diagnostic)`,
    limits: { algorithm: 'fixed-window', limit: LIMIT, windowMs: HOUR_MS },
    scriptOnly: true,
  },
  {
    id: 'gcra-1ms-script',
    label: 'ratekit gcra, T = 1 ms, script form (EVALSHA)',
    what: `${LIMITER_CALL}, on a client without FCALL (diagnostic)`,
    limits: { algorithm: 'gcra', limit: 3.6e6, windowMs: HOUR_MS },
    scriptOnly: true,
    idleKeysExpire: true,
  },
  { id: 'rlf', label: 'rate-limiter-flexible', what: 'RateLimiterRedis.consume(key) (fixed window)', peer: true, default: true },
  // The same code as `rlf` with only the import changed: issue 32's drop-in, on rlf's own data layout.
  { id: 'flexible', label: '@ratekit/flexible', what: "RateLimiterRedis.consume(key) from '@ratekit/flexible' (rlf's code, the import changed)", dropIn: true, default: true },
  {
    id: 'rlr',
    label: 'rate-limit-redis',
    what: "express-rate-limit's RedisStore.increment(key) (fixed window), sendCommand on the same client",
    peer: true,
    default: true,
  },
  {
    id: 'fastify-redis',
    label: '@fastify/rate-limit RedisStore',
    what: 'RedisStore.incr(key, cb) (fixed window; ioredis defineCommand, so ioredis only)',
    peer: true,
    default: true,
    clients: ['ioredis', 'ioredis-ap'],
  },
  {
    id: 'koa-redis',
    label: 'koa-ratelimit (redis driver)',
    what: 'new Limiter({ id: key, db: client }).get() (async-ratelimiter: a sliding log in a sorted set; ioredis only)',
    peer: true,
    default: true,
    clients: ['ioredis', 'ioredis-ap'],
  },
];

/**
 * The variant `of` with coalescing off: one call per decision. `of` is an algorithm of ours
 * (1e9 per hour) or `policy` (the policy variant's limits, declared above the twin).
 */
function loneTwin(of, extra) {
  return {
    id: `${of}-lone`,
    label: `ratekit ${of}, coalesce: false`,
    what: `${LIMITER_CALL} with redisStore({ client, coalesce: false }): one call per decision`,
    limits: of === 'policy' ? POLICY_LIMITS : { algorithm: of, limit: LIMIT, windowMs: HOUR_MS },
    coalesce: false,
    loneOf: of,
    ...extra,
  };
}

/** Connects a client of library `clientId` to `url`. @returns {{ client, close: () => Promise<void> }} */
export async function connectClient(clientId, url) {
  if (clientId === 'node-redis') {
    const client = createClient({ url });
    client.on('error', (error) => process.stderr.write(`node-redis: ${error.message}\n`));
    await client.connect();
    return { client, close: () => client.quit() };
  }
  const client = new Redis(url, { lazyConnect: true, enableAutoPipelining: clientId === 'ioredis-ap' });
  await client.connect();
  return { client, close: () => client.quit() };
}

/**
 * Builds variant `variantId` on a connected client. Every key the contender
 * writes starts with `prefix`.
 *
 * @returns {Promise<{ decide: (key: string) => Promise<boolean> }>} `decide` makes one decision and resolves with whether it was admitted
 */
export async function buildVariant(variantId, clientId, client, prefix) {
  const variant = VARIANTS.find((v) => v.id === variantId);
  if (variant === undefined) throw new Error(`unknown variant ${variantId}`);
  const nodeRedis = clientId === 'node-redis';
  if (variant.reference) {
    const sha = nodeRedis ? await client.scriptLoad(TRIVIAL_SCRIPT) : await client.script('LOAD', TRIVIAL_SCRIPT);
    const admitted = (count) => Number(count) >= 1;
    return nodeRedis ? { decide: (key) => client.evalSha(sha, { keys: [prefix + key], arguments: [] }).then(admitted) } : { decide: (key) => client.evalsha(sha, 1, prefix + key).then(admitted) };
  }
  if (variant.id === 'rlr') {
    const { RedisStore } = await import('rate-limit-redis');
    const sendCommand = nodeRedis ? (...args) => client.sendCommand(args) : (command, ...args) => client.call(command, ...args);
    const store = new RedisStore({ sendCommand, prefix });
    await store.init({ windowMs: HOUR_MS }); // loads its scripts once, before the first decision
    return { decide: (key) => store.increment(key).then((r) => r.totalHits <= LIMIT) };
  }
  if (variant.id === 'fastify-redis') {
    const RedisStore = require('@fastify/rate-limit/store/RedisStore.js');
    const store = new RedisStore(false, false, client, prefix);
    return {
      decide: (key) => new Promise((resolve, reject) => store.incr(key, (error, r) => (error ? reject(error) : resolve(r.current <= LIMIT)), HOUR_MS, LIMIT)),
    };
  }
  if (variant.id === 'koa-redis') {
    const Limiter = require('koa-ratelimit/limiter/redis.js');
    const namespace = prefix.slice(0, -1); // its key is `${namespace}:${id}`
    // Built per request, as koa-ratelimit's middleware does.
    return { decide: (key) => new Limiter({ id: key, db: client, max: LIMIT, duration: HOUR_MS, namespace }).get().then((r) => r.remaining > 0) };
  }
  if (variant.peer || variant.dropIn) {
    const Limiter = variant.dropIn ? FlexibleDropInRedis : RateLimiterRedis;
    const limiter = new Limiter({
      storeClient: client,
      useRedisPackage: nodeRedis,
      points: LIMIT,
      duration: HOUR_MS / 1_000,
      keyPrefix: prefix.slice(0, -1), // it adds ':' itself
    });
    const refused = (rejection) => {
      if (rejection instanceof Error) throw rejection;
      return false;
    };
    return { decide: (key) => limiter.consume(key).then(() => true, refused) };
  }
  const store = redisStore({ client: variant.scriptOnly ? withoutFcall(client) : client, prefix: prefix + 'p'.repeat(variant.prefixPadBytes ?? 0), coalesce: variant.coalesce ?? true });
  const limiter = createLimiter({ limits: variant.limits, store });
  if (variant.storeOnly) {
    const limits = limiter.limitsFor();
    return {
      decide: (key) => store.evaluate({ key, namespace: '', limits, cost: 1, mode: 'consume', nowMs: Date.now() }).then((d) => d.allowed),
    };
  }
  return { decide: (key) => limiter.consume(key).then((d) => d.allowed) };
}

/** `client` as the store sees it on a server without functions: no `fcall` (ioredis) or `fCall` (node-redis). */
function withoutFcall(client) {
  return new Proxy(client, {
    get(target, name) {
      if (name === 'fcall' || name === 'fCall') return undefined;
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
