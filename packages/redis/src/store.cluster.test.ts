import type { RateLimitStore } from '@ratekit/core';
import {
  ask,
  type ClusterNode,
  describeWithService,
  freshNamespace,
  limits,
  parseClusterNodes,
  redisClusterService,
  testCoalescing,
  testRefusalCacheDifferential,
  testStore,
} from '@ratekit/test-utils';
import { Cluster } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { DECISION_FUNCTION } from './scripts.js';
import { type RedisClientLike, type RedisStore, redisStore } from './store.js';

/**
 * The Redis store on a Redis Cluster (REDIS_CLUSTER_NODES, or 3 masters
 * started on loopback), through both clients' cluster APIs, with the store
 * unchanged: the conformance suite, where keys land, script loading per
 * node, coalescing per slot and the refusal cache's differential.
 */

/** The two supported cluster clients, connected through `nodes`, with a uniform way to close them. */
const CLUSTER_CLIENTS = {
  'node-redis createCluster': async (nodes: readonly ClusterNode[]) => {
    const cluster = createCluster({ rootNodes: nodes.map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
    cluster.on('error', () => {}); // errors reach the commands that fail; a listener keeps the process alive
    await cluster.connect();
    return { client: cluster satisfies RedisClientLike, close: () => cluster.close().then(() => undefined) };
  },
  'ioredis Cluster': async (nodes: readonly ClusterNode[]) => {
    const cluster = new Cluster(
      nodes.map((node) => ({ host: node.host, port: node.port })),
      { enableAutoPipelining: true },
    );
    await new Promise<void>((resolve, reject) => cluster.once('ready', resolve).once('error', reject));
    return { client: cluster satisfies RedisClientLike, close: () => cluster.quit().then(() => undefined) };
  },
} as const;

/** A plain connection to one node, for inspecting it: what it holds, which slots it serves. */
const connectNode = (node: ClusterNode) => createClient({ url: `redis://${node.host}:${node.port}` }).connect();
type NodeConnection = Awaited<ReturnType<typeof connectNode>>;

interface Master {
  readonly address: string;
  readonly connection: NodeConnection;
  readonly ranges: ReadonlyArray<readonly [from: number, to: number]>;
}

/** The masters and the slot ranges each serves, as the cluster itself reports them (`CLUSTER SLOTS`). */
async function connectMasters(seed: NodeConnection): Promise<Master[]> {
  const ranges = new Map<string, { node: ClusterNode; ranges: Array<readonly [number, number]> }>();
  for (const slot of await seed.clusterSlots()) {
    const address = `${slot.master.host}:${slot.master.port}`;
    const entry = ranges.get(address) ?? { node: { host: slot.master.host, port: slot.master.port }, ranges: [] };
    entry.ranges.push([slot.from, slot.to]);
    ranges.set(address, entry);
  }
  return Promise.all([...ranges].map(async ([address, entry]) => ({ address, connection: await connectNode(entry.node), ranges: entry.ranges })));
}

/** Keys of `match` on one node, by SCAN. */
async function scanKeys(connection: NodeConnection, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const reply = await connection.scan(cursor, { MATCH: match, COUNT: 1_000 });
    cursor = String(reply.cursor);
    keys.push(...reply.keys);
  } while (cursor !== '0');
  return keys;
}

describeWithService(redisClusterService, 'redisStore on a Redis Cluster', (server) => {
  for (const [clientName, connect] of Object.entries(CLUSTER_CLIENTS)) {
    describe(`with ${clientName}`, () => {
      const connections = new WeakMap<RateLimitStore, () => Promise<void>>();
      const open = async (clock: 'caller' | 'server', coalesce = true) => {
        const connection = await connect(parseClusterNodes(server().url));
        const store = redisStore({ client: connection.client, clock, prefix: 'ratekit-cluster-test:', coalesce });
        connections.set(store, connection.close);
        return store;
      };
      const disposeStore = (store: RateLimitStore) => connections.get(store)?.();

      testStore({
        name: `redis cluster (${clientName})`,
        makeStore: () => open('caller'),
        disposeStore,
        additionalTests: ({ store, namespace }) => {
          describe('on the cluster', () => {
            let seed: NodeConnection;
            let masters: Master[];
            beforeAll(async () => {
              seed = await connectNode(parseClusterNodes(server().url)[0]!);
              masters = await connectMasters(seed);
            });
            afterAll(async () => {
              await Promise.all([seed, ...masters.map((m) => m.connection)].map((c) => c.quit()));
            });
            const masterOf = (slot: number) => masters.find((m) => m.ranges.some(([from, to]) => slot >= from && slot <= to))!;

            it('spreads many partition keys over every master, one hash per decision on the slot of its hash tag', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              const policy = limits({ limit: 5, windowMs: 60_000, name: 'minute' }, { algorithm: 'gcra', limit: 100, windowMs: 3_600_000, name: 'hour' });
              const partitionKeys = Array.from({ length: 300 }, (_, i) => `client-${i}`);
              const decisions = await Promise.all(partitionKeys.map((key) => ask(redis, { namespace: ns, limits: policy, key })));
              expect(decisions.every((d) => d.allowed && d.remaining === 4)).toBe(true);

              // Where each key must be: the master serving the slot of its hash tag alone.
              const expected = new Map(masters.map((m) => [m.address, [] as string[]]));
              for (const key of partitionKeys) {
                const redisKey = redis.keyFor(key, ns);
                const slot = await seed.clusterKeySlot(redisKey);
                expect(await seed.clusterKeySlot(`${ns.length}:${ns}:${key}`)).toBe(slot);
                expected.get(masterOf(slot).address)!.push(redisKey);
              }
              // Where they are: every key of this namespace on each master, found by SCAN.
              const found = new Map<string, string[]>();
              for (const master of masters) found.set(master.address, await scanKeys(master.connection, `ratekit-cluster-test:{${ns.length}:${ns}:*`));

              for (const master of masters) {
                expect(found.get(master.address)!.sort()).toEqual(expected.get(master.address)!.sort());
                expect(found.get(master.address)!.length).toBeGreaterThan(0);
                for (const key of found.get(master.address)!.slice(0, 5)) expect((await master.connection.hKeys(key)).sort()).toEqual(['fixed-window:minute', 'gcra:hour']);
              }
              expect([...found.values()].reduce((sum, keys) => sum + keys.length, 0)).toBe(partitionKeys.length);
            });

            it('loads the function library again on each master that lost it (Function not found per node), and decides correctly', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              const policy = limits({ limit: 3, windowMs: 60_000 });
              const libraries = (master: (typeof masters)[number]) => master.connection.sendCommand<unknown[]>(['FUNCTION', 'LIST', 'LIBRARYNAME', DECISION_FUNCTION]);
              // Enough keys to land on every master.
              const partitionKeys = Array.from({ length: 60 }, (_, i) => `k${i}`);
              await Promise.all(partitionKeys.map((key) => ask(redis, { namespace: ns, limits: policy, key })));
              for (const master of masters) expect(await libraries(master)).toHaveLength(1);
              await Promise.all(masters.map((m) => m.connection.sendCommand(['FUNCTION', 'FLUSH'])));
              for (const master of masters) expect(await libraries(master)).toHaveLength(0);

              const decisions = await Promise.all(partitionKeys.map((key) => ask(redis, { namespace: ns, limits: policy, key })));
              expect(decisions.map((d) => d.remaining)).toEqual(partitionKeys.map(() => 1));
              for (const master of masters) expect(await libraries(master)).toHaveLength(1);
            });
          });
        },
      });

      // On the server clock GCRA and fixed-window limits have keys of their own (the expiry layout): reset needs the policy.
      testStore({ name: `redis cluster (${clientName})`, clock: 'server', resetKeyNeedsLimits: true, makeStore: () => open('server'), disposeStore });

      // Coalescing per hash slot never changes a decision: turns over keys of several slots against one at a time.
      testCoalescing({ name: `redis cluster (${clientName})`, makeStore: () => open('caller'), disposeStore });
      testCoalescing({ name: `redis cluster (${clientName})`, clock: 'server', makeStore: () => open('server'), makeReference: () => open('server', false), disposeStore });

      // The refusal cache (blocked refusals included) never changes a decision on the cluster either.
      testRefusalCacheDifferential({ name: `redis cluster (${clientName})`, makeStore: () => open('caller'), disposeStore });
    });
  }

  describe('both cluster clients on one cluster', () => {
    it('share the same state', async () => {
      const nodes = parseClusterNodes(server().url);
      const a = await CLUSTER_CLIENTS['node-redis createCluster'](nodes);
      const b = await CLUSTER_CLIENTS['ioredis Cluster'](nodes);
      try {
        const viaNodeRedis = redisStore({ client: a.client });
        const viaIoredis = redisStore({ client: b.client });
        const ns = freshNamespace();
        const policy = limits({ algorithm: 'gcra', limit: 2, windowMs: 3_600_000 });
        expect((await ask(viaNodeRedis, { namespace: ns, limits: policy })).allowed).toBe(true);
        expect((await ask(viaIoredis, { namespace: ns, limits: policy })).allowed).toBe(true);
        expect((await ask(viaNodeRedis, { namespace: ns, limits: policy })).allowed).toBe(false);
        expect((await ask(viaIoredis, { namespace: ns, limits: policy })).allowed).toBe(false);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
});
