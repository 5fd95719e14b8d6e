import { type ClusterNode, describeWithService, parseClusterNodes, redisClusterService } from '@ratekit/test-utils';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { createCluster as createCluster4 } from 'redis';
import { createCluster as createCluster5 } from 'redis5';
import { RateLimiterRedis as RlfRateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiterRedis } from './redis.js';
import { CROSS_SLOT_CODE } from './redis-all-or-nothing.js';
import { RateLimiterUnion } from './union.js';

/**
 * RateLimiterRedis on a Redis Cluster (REDIS_CLUSTER_NODES, or 3 masters
 * started on loopback), through each library's cluster client: every call is
 * one script on one key (or one slot's keys, coalesced), so the client routes
 * it; nothing is sent to the wrong node (rlf #283 was node-redis's cluster
 * EVAL answered with MOVED).
 */

interface Connected {
  readonly client: object;
  close(): Promise<unknown>;
}

const CLUSTER_CLIENTS: Record<string, (nodes: readonly ClusterNode[]) => Promise<Connected>> = {
  'ioredis Cluster': async (nodes) => {
    const cluster = new Cluster(nodes.map((node) => ({ host: node.host, port: node.port })));
    await new Promise<void>((resolve, reject) => cluster.once('ready', resolve).once('error', reject));
    return { client: cluster, close: () => cluster.quit() };
  },
  'node-redis 4 createCluster': async (nodes) => {
    const cluster = createCluster4({ rootNodes: nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
    cluster.on('error', () => {});
    await cluster.connect();
    return { client: cluster, close: () => cluster.disconnect() };
  },
  'node-redis 5 createCluster': async (nodes) => {
    const cluster = createCluster5({ rootNodes: nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
    cluster.on('error', () => {});
    await cluster.connect();
    return { client: cluster, close: () => cluster.close() };
  },
};

let prefixes = 0;

describeWithService(redisClusterService, 'RateLimiterRedis on a Redis Cluster', (server) => {
  let admin: Cluster;
  beforeAll(async () => {
    const nodes = parseClusterNodes(server().url);
    admin = new Cluster(nodes.map((node) => ({ host: node.host, port: node.port })));
    await new Promise<void>((resolve, reject) => admin.once('ready', resolve).once('error', reject));
  });
  afterAll(async () => {
    await admin.quit();
  });

  it("rlf 11.4's RateLimiterRedis and ours, alternating on one ioredis Cluster, count as one fleet (six keys, on the slots they land on)", async () => {
    const connected = await CLUSTER_CLIENTS['ioredis Cluster']!(parseClusterNodes(server().url));
    try {
      const options = { storeClient: connected.client, keyPrefix: `rk-flex-cluster-fleet-${process.pid}`, points: 3, duration: 30 };
      const limiters = [new RlfRateLimiterRedis(options), new RateLimiterRedis(options)] as const;
      for (const key of Array.from({ length: 6 }, (_, i) => `user-${i}`)) {
        const answers: unknown[] = [];
        for (let i = 0; i < 5; i++) {
          answers.push(
            await limiters[i % 2]!.consume(key).then(
              (res) => ['resolved', res.consumedPoints, res.remainingPoints, res.isFirstInDuration],
              (res: { consumedPoints: number; remainingPoints: number; isFirstInDuration: boolean }) => ['rejected', res.consumedPoints, res.remainingPoints, res.isFirstInDuration],
            ),
          );
        }
        expect(answers).toEqual([
          ['resolved', 1, 2, true],
          ['resolved', 2, 1, false],
          ['resolved', 3, 0, false],
          ['rejected', 4, 0, false],
          ['rejected', 5, 0, false],
        ]);
        expect(await admin.get(limiters[0].getKey(key))).toBe('5');
        expect((await limiters[1].get(key))?.consumedPoints).toBe(5);
        expect((await limiters[0].get(key))?.consumedPoints).toBe(5);
      }
    } finally {
      await connected.close();
    }
  });

  for (const [name, connect] of Object.entries(CLUSTER_CLIENTS)) {
    describe(name, () => {
      let connected: Connected;
      beforeAll(async () => {
        connected = await connect(parseClusterNodes(server().url));
      });
      afterAll(async () => {
        await connected.close();
      });
      const limiter = (options: Record<string, unknown> = {}) =>
        new RateLimiterRedis({ storeClient: connected.client, keyPrefix: `rk-flex-cluster-${process.pid}-${++prefixes}`, points: 100, duration: 30, rejectIfRedisNotReady: true, ...options });

      it("consumes, gets, sets, blocks and deletes keys on every master, in rlf's layout", async () => {
        const rl = limiter();
        const keys = Array.from({ length: 12 }, (_, i) => `user-${i}`);
        for (const key of keys) expect((await rl.consume(key, 2)).consumedPoints).toBe(2);
        for (const key of keys) {
          expect(await admin.get(rl.getKey(key))).toBe('2');
          // A 30 s window, read up to a few seconds later on a busy machine: 5 s of margin.
          expect(await admin.ttl(rl.getKey(key))).toBeGreaterThanOrEqual(25);
          expect(await admin.ttl(rl.getKey(key))).toBeLessThanOrEqual(30);
          expect((await rl.get(key))?.consumedPoints).toBe(2);
        }
        await rl.set(keys[0]!, 9, 0);
        await rl.block(keys[1]!, 60);
        expect(await admin.get(rl.getKey(keys[0]!))).toBe('9');
        expect(await admin.ttl(rl.getKey(keys[0]!))).toBe(-1);
        expect(await admin.ttl(rl.getKey(keys[1]!))).toBeGreaterThanOrEqual(55);
        expect(await rl.delete(keys[2]!)).toBe(true);
        expect(await admin.exists(rl.getKey(keys[2]!))).toBe(0);
      });

      it('coalesced concurrent consumes over keys of many slots count each key exactly', async () => {
        const rl = limiter();
        const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
        const calls = Array.from({ length: 60 }, (_, i) => keys[i % keys.length]!);
        const results = await Promise.all(calls.map((key) => rl.consume(key)));
        for (const key of keys) {
          const counts = results.filter((_, i) => calls[i] === key).map((res) => res.consumedPoints);
          expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
          expect(await admin.get(rl.getKey(key))).toBe('6');
        }
      });

      it('an all-or-nothing union: keys with one hash tag are charged in one call; keys of different slots are refused with a coded error, uncharged', async () => {
        const a = limiter({ points: 1 });
        const b = limiter({ points: 5 });
        const union = new RateLimiterUnion(a, b, { allOrNothing: true });
        await union.consume('{u1}');
        const refused = (await union.consume('{u1}').catch((r: unknown) => r)) as Record<string, unknown>;
        expect(Object.keys(refused)).toEqual([a.keyPrefix]);
        expect([await admin.get(a.getKey('{u1}')), await admin.get(b.getKey('{u1}'))]).toEqual(['1', '1']);

        // A key whose two limiters' keys land on different slots (most do).
        let n = 0;
        while (calculateSlot(a.getKey(`plain-${n}`)) === calculateSlot(b.getKey(`plain-${n}`))) n++;
        const key = `plain-${n}`;
        const failure = (await union.consume(key).catch((r: unknown) => r)) as Record<string, Error & { code?: string }>;
        expect(failure[a.keyPrefix]?.code).toBe(CROSS_SLOT_CODE);
        expect(await admin.exists(a.getKey(key))).toBe(0);
        expect(await admin.exists(b.getKey(key))).toBe(0);
      });
    });
  }
});
