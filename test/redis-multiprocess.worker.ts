/**
 * A worker process of redis-multiprocess.test.ts: one app server sharing a
 * Redis with the others. Run with tsx, which maps @ratekit/* to the sources
 * through the root tsconfig.json, so no build is needed.
 *
 * Environment:
 *   RATEKIT_CLIENT         `node-redis` | `ioredis`
 *   REDIS_URL              a single Redis; or
 *   RATEKIT_CLUSTER_NODES  a Redis Cluster: JSON `[{ host, port }, …]`, for `createCluster` / ioredis `Cluster`.
 * Messages in:  { type: 'run', id, namespace, key, requests, limits } | { type: 'exit' }
 * Messages out: { type: 'ready' } | { type: 'result', id, admitted, refused } | { type: 'error', message }
 */
import { createLimiter, type LimitOptions } from '@ratekit/core';
import { type RedisClientLike, redisStore } from '@ratekit/redis';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';

interface RunMessage {
  type: 'run';
  id: number;
  namespace: string;
  key: string;
  requests: number;
  limits: LimitOptions[];
}

type Message = RunMessage | { type: 'exit' };

function send(message: unknown): void {
  process.send?.(message);
}

interface Connection {
  client: RedisClientLike;
  close(): Promise<unknown>;
}

async function connectCluster(nodes: Array<{ host: string; port: number }>, kind: string): Promise<Connection> {
  if (kind === 'ioredis') {
    const client = new Cluster(nodes, { enableAutoPipelining: true });
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit() };
  }
  const client = createCluster({ rootNodes: nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
  client.on('error', (error: Error) => send({ type: 'error', message: `node-redis cluster: ${error.message}` }));
  await client.connect();
  return { client, close: () => client.close() };
}

async function connect(url: string, kind: string): Promise<Connection> {
  if (kind === 'ioredis') {
    const client = new Redis(url, { enableAutoPipelining: true });
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit() };
  }
  const client = createClient({ url });
  // node-redis crashes the process on an 'error' event without a listener; report it instead.
  client.on('error', (error: Error) => send({ type: 'error', message: `node-redis: ${error.message}` }));
  await client.connect();
  return { client, close: () => client.quit() };
}

function main(): void {
  const kind = process.env.RATEKIT_CLIENT ?? 'node-redis';
  const clusterNodes = process.env.RATEKIT_CLUSTER_NODES;
  const url = process.env.REDIS_URL;
  if (clusterNodes === undefined && url === undefined) throw new Error('Neither REDIS_URL nor RATEKIT_CLUSTER_NODES is set');
  (clusterNodes !== undefined ? connectCluster(JSON.parse(clusterNodes), kind) : connect(url!, kind)).then(
    (connection) => {
      const store = redisStore({ client: connection.client });
      process.on('message', (message: Message) => {
        if (message.type === 'exit') {
          void connection.close().finally(() => process.exit(0)); // exits whether or not the close succeeds
          return;
        }
        const limiter = createLimiter({ limits: message.limits, store, prefix: message.namespace, storeTimeoutMs: 10_000 });
        // eslint-disable-next-line @typescript-eslint/await-thenable -- consume() answers with a promise on the Redis store; its type also allows a decision
        Promise.all(Array.from({ length: message.requests }, () => limiter.consume(message.key))).then(
          (decisions) => {
            const admitted = decisions.filter((d) => d.allowed).length;
            send({ type: 'result', id: message.id, admitted, refused: decisions.length - admitted });
          },
          (error: Error) => send({ type: 'error', message: error.message }),
        );
      });
      send({ type: 'ready' });
    },
    (error: Error) => {
      send({ type: 'error', message: `could not connect: ${error.message}` });
      process.exit(1);
    },
  );
}

main();
