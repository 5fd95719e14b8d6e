/**
 * A driver process of redis-failover.test.ts: one app server deciding on
 * many keys through the Redis store while the test kills Redis under it.
 * Run with tsx, which maps @ratekit/* to the sources through the root
 * tsconfig.json, so no build is needed.
 *
 * Messages in:  {@link StartMessage} | { type: 'stop' }
 * Messages out: { type: 'ready' } once connected and deciding;
 *               { type: 'samples', samples } every 100 ms (see {@link Sample});
 *               { type: 'done', crashes, clientErrors, closed } once stopped (closed: whether the client's close settled within 2 s);
 *               { type: 'error', message } when it cannot connect.
 *
 * The process never exits on its own error: an unhandled rejection or an
 * uncaught exception is counted and reported in 'done' (the test asserts
 * there were none), so that what would crash an app is seen, not hidden.
 */
import { performance } from 'node:perf_hooks';
import { createLimiter, type Decision } from '@ratekit/core';
import { type RedisClientLike, redisStore } from '@ratekit/redis';
import { StallProbe } from '@ratekit/test-utils';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';

import { ADMITTED, ALLOWED_BY_POLICY, DENIED_BY_POLICY, REFUSED, type Sample, type StartMessage } from './redis-failover.shared';

const send = (message: unknown) => process.send?.(message);
const epoch = (perfNow: number) => performance.timeOrigin + perfNow;
const debug = (what: string) => process.env.RATEKIT_FAILOVER_DEBUG && process.stderr.write(`[driver ${process.pid}] ${what}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Anything can be thrown or rejected with, `undefined` included: its stack when it has one, else the value.
const describe = (thrown: unknown) => String((thrown as { stack?: unknown } | null | undefined)?.stack ?? thrown);
const crashes: string[] = [];
process.on('unhandledRejection', (reason) => crashes.push(`unhandledRejection: ${describe(reason)}`));
process.on('uncaughtException', (error) => crashes.push(`uncaughtException: ${describe(error)}`));

interface Connection {
  client: RedisClientLike;
  close(): Promise<unknown>;
}

/**
 * The clients configured as packages/redis/README.md recommends for a rate
 * limiter: fail fast while a node is unreachable, keep reconnecting, and
 * find the new master soon after a failover.
 */
async function connect(message: StartMessage, errors: { count: number }): Promise<Connection> {
  const onError = () => {
    errors.count++;
  };
  const { topology } = message;
  const reconnect = (retries: number) => Math.min(50 * 2 ** retries, 500);
  if (message.client === 'ioredis') {
    const options = { enableAutoPipelining: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: reconnect };
    let client: Redis | Cluster;
    if (topology.kind === 'cluster') {
      client = new Cluster(topology.nodes, {
        enableAutoPipelining: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: reconnect,
        redisOptions: { maxRetriesPerRequest: 0, connectTimeout: 1_000 },
      });
    } else if (topology.kind === 'sentinel') {
      // Not `failoverDetector: true`: with ioredis 6.0.0, a +switch-master that arrives while the client is
      // reconnecting to the dead master ended the client for good in 3 runs of 4 (see the README).
      client = new Redis({ ...options, sentinels: topology.sentinels, name: topology.name, sentinelRetryStrategy: reconnect });
    } else {
      client = new Redis(topology.port, topology.host, options);
    }
    client.on('error', onError);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: async () => client.disconnect() };
  }
  const nodeOptions = { disableOfflineQueue: true, socket: { connectTimeout: 1_000, reconnectStrategy: reconnect } };
  if (topology.kind === 'cluster') {
    const client = createCluster({
      rootNodes: topology.nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })),
      defaults: nodeOptions,
      // Ask the cluster for its slots 500 ms after a node's connection is lost (default 5 s), to find the promoted replica.
      topologyRefreshOnReconnectionAttemptStrategy: 500,
    });
    client.on('error', onError);
    await client.connect();
    return { client, close: async () => client.destroy() };
  }
  if (topology.kind === 'sentinel') {
    const client = createSentinel({
      name: topology.name,
      sentinelRootNodes: topology.sentinels,
      nodeClientOptions: nodeOptions,
      sentinelClientOptions: { socket: { connectTimeout: 1_000, reconnectStrategy: reconnect } },
      passthroughClientErrorEvents: true,
    });
    client.on('error', onError);
    await client.connect();
    return { client, close: () => client.destroy() };
  }
  const client = createClient({ ...nodeOptions, socket: { ...nodeOptions.socket, host: topology.host, port: topology.port } });
  client.on('error', onError);
  await client.connect();
  return { client, close: async () => client.destroy() };
}

async function run(message: StartMessage): Promise<void> {
  const errors = { count: 0 };
  /** Why store calls failed (numbers masked), and how often. */
  const failures = new Map<string, number>();
  const connection = await connect(message, errors);
  const { limit, keys } = message;
  const limiter = createLimiter({
    limits: { algorithm: 'fixed-window', limit, windowMs: message.windowMs },
    store: redisStore({ client: connection.client, prefix: 'ratekit-failover:' }),
    prefix: message.namespace,
    storeTimeoutMs: message.storeTimeoutMs,
    onStoreError: message.onStoreError,
    onError: (error) => {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? error.message;
      const reason = cause.replace(/\d+/g, 'N').slice(0, 120);
      failures.set(reason, (failures.get(reason) ?? 0) + 1);
    },
  });
  // Where a decision came from, by its shape: the policy's answer has the whole limit remaining (a fresh state).
  const origin = (d: Decision) => {
    if (d.remaining === limit) return d.allowed ? (d.retryAfterMs === 0 ? ALLOWED_BY_POLICY : 0) : d.retryAfterMs === 1_000 ? DENIED_BY_POLICY : 0;
    return d.allowed ? ADMITTED : d.remaining === 0 ? REFUSED : 0;
  };

  const stalls = new StallProbe(10);
  let pending: Array<{ key: number; startedAt: number; endedAt: number; origin: number; remaining: number }> = [];
  let stopping = false;
  const flush = () => {
    const samples: Sample[] = pending.map((s) => [s.key, epoch(s.startedAt), s.endedAt - s.startedAt, s.origin, s.remaining, stalls.longestStall(s.startedAt, s.endedAt)]);
    pending = [];
    if (samples.length > 0) send({ type: 'samples', samples });
  };
  const flusher = setInterval(flush, 100);

  const loop = async (offset: number) => {
    for (let i = offset; !stopping; i++) {
      const key = i % keys.length;
      const startedAt = performance.now();
      const decision = await limiter.consume(keys[key]!);
      pending.push({ key, startedAt, endedAt: performance.now(), origin: origin(decision), remaining: decision.remaining });
      await sleep(message.pauseMs);
    }
  };
  const step = Math.max(1, Math.floor(keys.length / message.loops));
  const loops = Array.from({ length: message.loops }, (_, i) => loop(i * step));
  send({ type: 'ready' });

  await new Promise<void>((resolve) => process.on('message', (m: { type: string }) => m.type === 'stop' && resolve()));
  stopping = true;
  debug('stopping');
  await Promise.all(loops);
  debug('loops stopped');
  clearInterval(flusher);
  flush();
  stalls.stop();
  // A client whose close never settles is reported, not waited for.
  debug('closing');
  const closed = await Promise.race([
    connection.close().then(
      () => true,
      () => true,
    ),
    sleep(2_000).then(() => false),
  ]);
  process.send?.({ type: 'done', crashes, clientErrors: errors.count, closed, failures: [...failures] }, () => process.exit(0));
}

process.once('message', (message: StartMessage) => {
  run(message).catch((error: Error) => send({ type: 'error', message: error.stack ?? error.message }));
});
