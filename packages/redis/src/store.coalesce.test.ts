import { createLimiter, RateKitOptionError } from '@ratekit/core';
import { ask, describeWithService, freshNamespace, inOnePollPhase, limits, parseClusterNodes, privateRedisService, redisClusterService } from '@ratekit/test-utils';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { DECISION_BATCH_FUNCTION, DECISION_FUNCTION } from './scripts.js';
import { type RedisClientLike, redisStore } from './store.js';

/**
 * Coalescing: the decisions asked of one store in one turn of the event loop
 * go to Redis as one call. (That it never changes a decision is checked by
 * the property tests of `testCoalescing`, run beside the conformance suite in
 * store.test.ts and store.cluster.test.ts.)
 */

/**
 * The tests that count calls pin the window rule (one batch per iteration, and `maxBatchSize`): with the
 * default `batchesInFlight`, when a batch goes also depends on when earlier ones are answered.
 */
const ONE_BATCH_PER_ITERATION = { batchesInFlight: 0 } as const;

const connectAdmin = (url: string) => createClient({ url }).connect();
type NodeRedisClient = Awaited<ReturnType<typeof connectAdmin>>;

/** The two supported clients, connected to `url`; `calls` lists the function (FCALL) or script (EVALSHA) calls the store made, by name. */
const CLIENTS = {
  'node-redis': async (url: string) => {
    const client = await createClient({ url }).connect();
    return { client: client satisfies RedisClientLike, close: () => client.quit().then(() => undefined) };
  },
  ioredis: async (url: string) => {
    const client = new Redis(url);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client: client satisfies RedisClientLike, close: () => client.quit().then(() => undefined) };
  },
} as const;

/** `client`, recording the name of every function it is asked to FCALL (and the keys of each batch); `scriptOnly`: without FCALL, as on Redis < 7. */
function spied(client: RedisClientLike, options: { scriptOnly?: boolean } = {}) {
  const called: string[] = [];
  const batchKeys: string[][] = [];
  const proxy = new Proxy(client, {
    get(target, name) {
      if ((name === 'fcall' || name === 'fCall') && options.scriptOnly) return undefined;
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      if (name === 'fcall' || name === 'fCall') {
        return (fn: string, ...rest: unknown[]) => {
          called.push(fn === DECISION_BATCH_FUNCTION ? 'batch' : fn === DECISION_FUNCTION ? 'lone' : fn);
          if (fn === DECISION_BATCH_FUNCTION) {
            // node-redis: ({ keys }); ioredis: (numkeys, ...keys, ...args).
            batchKeys.push(typeof rest[0] === 'number' ? (rest.slice(1, 1 + rest[0]) as string[]) : (rest[0] as { keys: string[] }).keys);
          }
          return (value as (...args: unknown[]) => unknown).call(target, fn, ...rest);
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { client: proxy, called, batchKeys };
}

/** Calls per command since the last `CONFIG RESETSTAT`, without the admin's own commands. */
async function commandCalls(admin: NodeRedisClient): Promise<Record<string, number>> {
  const info = await admin.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const command = match[1]!;
    if (command === 'info' || command.startsWith('config') || command === 'client|pause') continue;
    calls[command] = Number(match[2]);
  }
  return calls;
}

describe('redisStore coalescing options', () => {
  const fakeNodeRedis = { evalSha: async () => '', eval: async () => '', del: async () => 0 };

  it.each([1, 0, 2.5, -3, '10', Number.NaN])('refuses maxBatchSize %p with a coded option error', (maxBatchSize) => {
    expect(() => redisStore({ client: fakeNodeRedis, maxBatchSize: maxBatchSize as never })).toThrow(RateKitOptionError);
    expect(() => redisStore({ client: fakeNodeRedis, maxBatchSize: maxBatchSize as never })).toThrow(/Expected `maxBatchSize` to be an integer >= 2/);
  });

  it('refuses a coalesce that is not a boolean', () => {
    expect(() => redisStore({ client: fakeNodeRedis, coalesce: 'yes' as never })).toThrow(/Expected `coalesce` to be a boolean/);
  });

  it.each([-1, 1.5, '4', Number.POSITIVE_INFINITY])('refuses batchesInFlight %p with a coded option error', (batchesInFlight) => {
    expect(() => redisStore({ client: fakeNodeRedis, batchesInFlight: batchesInFlight as never })).toThrow(RateKitOptionError);
    expect(() => redisStore({ client: fakeNodeRedis, batchesInFlight: batchesInFlight as never })).toThrow(/Expected `batchesInFlight` to be an integer >= 0/);
  });

  it('a client that throws instead of rejecting fails the decisions of the batch, and nothing is thrown from the check phase', async () => {
    const throwing = {
      ...fakeNodeRedis,
      sendCommand: async () => '',
      fCall: () => {
        throw new Error('The client is closed');
      },
    };
    const store = redisStore({ client: throwing });
    const request = { key: 'k', namespace: 'n', limits: limits({ limit: 5, windowMs: 1_000 }), cost: 1, mode: 'consume' as const, nowMs: 0 };
    const asked: Array<Promise<unknown>> = [];
    for (let i = 0; i < 3; i++) {
      try {
        asked.push(store.evaluate(request));
      } catch (error) {
        asked.push(Promise.reject(error)); // the first, sent at once, throws to its caller (the limiter catches it)
      }
    }
    const settled = await Promise.allSettled(asked);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(settled.map((s) => String((s as PromiseRejectedResult).reason.message))).toEqual(Array(3).fill('The client is closed'));
  });
});

// Counting commands (CONFIG RESETSTAT) and pausing clients touch the whole server: a Redis of its own.
describeWithService(privateRedisService, 'redisStore coalescing (on a Redis of its own)', (server) => {
  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName}`, () => {
      let admin: NodeRedisClient;
      let connection: Awaited<ReturnType<typeof connect>>;
      beforeAll(async () => {
        admin = await connectAdmin(server().url);
        connection = await connect(server().url);
        // Load the library once, so the counts below see the steady state.
        await ask(redisStore({ client: connection.client }), { namespace: freshNamespace(), limits: limits({ limit: 1, windowMs: 1_000 }) });
      });
      afterAll(async () => {
        await connection.close();
        await admin.quit();
      });

      it(
        clientName === 'ioredis'
          ? 'by default (a client that writes each call at once), a batch of 16 or more goes as soon as it holds half the decisions pending: Redis decides it while the next ones are asked'
          : 'by default (a client that writes the calls of an iteration together), the decisions asked after the first go as one batch, at the check phase',
        async () => {
          const { client, called, batchKeys } = spied(connection.client);
          const store = redisStore({ client });
          const ns = freshNamespace();
          const policy = limits({ limit: 100, windowMs: 60_000 });
          // One synchronous run of 24 asks (nothing is answered meanwhile). ioredis: the first alone, then
          // a batch of 16 (half of the 16 pending, and the least an early batch holds) before the check
          // phase, and the last 7 at it. node-redis: the first alone, the other 23 at the check phase.
          const asked = Array.from({ length: 24 }, () => ask(store, { namespace: ns, limits: policy }));
          const early = clientName === 'ioredis' ? [16] : [];
          expect(called).toEqual(['lone', ...early.map(() => 'batch')]);
          expect(batchKeys.map((keys) => keys.length)).toEqual(early);
          const decisions = await Promise.all(asked);
          expect(batchKeys.map((keys) => keys.length)).toEqual(clientName === 'ioredis' ? [...early, 7] : [23]);
          // Decided in the order asked, each once.
          expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 24 }, (_, i) => 99 - i));
        },
      );

      it('a decision alone in its turn is sent at once, as the lone FCALL; the decisions asked after the first of a turn, as one batch FCALL', async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(9);
        expect(called).toEqual(['lone']);
        const turn = await Promise.all([1, 2, 3].map(() => ask(store, { namespace: ns, limits: policy })));
        expect(turn.map((d) => d.remaining)).toEqual([8, 7, 6]);
        expect(called).toEqual(['lone', 'lone', 'batch']);
      });

      it('a lone decision goes out at once: its FCALL is made before evaluate() returns, with no setImmediate or tick before it', async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        const decision = ask(store, { namespace: ns, limits: policy });
        expect(called).toEqual(['lone']);
        expect((await decision).remaining).toBe(9);
      });

      it('decisions asked from separate I/O callbacks of one poll phase (requests read together) join one batch, sent at the check phase', async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        await admin.configResetStat();
        const decisions = await inOnePollPhase(6, () => ask(store, { namespace: ns, limits: policy }));
        expect(decisions.map((d) => d.remaining).sort((a, b) => b - a)).toEqual([9, 8, 7, 6, 5, 4]);
        // The first callback's decision at once; the five asked in the callbacks after it, one batch.
        expect(called).toEqual(['lone', 'batch']);
        expect((await commandCalls(admin)).fcall).toBe(2);
      });

      it("under load, one FCALL per iteration: after an iteration whose decisions joined its first, the next one's first waits with them; an iteration of one decision opens again", async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const ns = freshNamespace();
        const policy = limits({ limit: 100, windowMs: 60_000 });
        const iteration = (n: number) => inOnePollPhase(n, () => ask(store, { namespace: ns, limits: policy }));
        await iteration(4);
        expect(called).toEqual(['lone', 'batch']);
        await iteration(4);
        await iteration(4);
        expect(called).toEqual(['lone', 'batch', 'batch', 'batch']);
        // One decision in its iteration: held to the check phase once (sent alone), then at once again.
        await iteration(1);
        expect(called).toEqual(['lone', 'batch', 'batch', 'batch', 'lone']);
        const lone = ask(store, { namespace: ns, limits: policy });
        expect(called).toEqual(['lone', 'batch', 'batch', 'batch', 'lone', 'lone']);
        expect((await lone).remaining).toBe(100 - 14);
      });

      it('a batch that reaches maxBatchSize is sent at once, before the check phase; the rest of the iteration at the check phase', async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION, maxBatchSize: 3 });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        const asked = Array.from({ length: 6 }, () => ask(store, { namespace: ns, limits: policy }));
        // The first, then a full batch of 3, sent without waiting; 2 wait for the check phase.
        expect(called).toEqual(['lone', 'batch']);
        const decisions = await Promise.all(asked);
        expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4]);
        expect(called).toEqual(['lone', 'batch', 'batch']);
      });

      it('dispose() sends the decisions waiting for the check phase at once', async () => {
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        const asked = Array.from({ length: 3 }, () => ask(store, { namespace: ns, limits: policy }));
        expect(called).toEqual(['lone']);
        store.dispose();
        expect(called).toEqual(['lone', 'batch']);
        expect((await Promise.all(asked)).map((d) => d.remaining)).toEqual([9, 8, 7]);
        // The check phase then finds nothing left to send.
        await new Promise((resolve) => setImmediate(resolve));
        expect(called).toEqual(['lone', 'batch']);
      });

      it('a turn of decisions of several keys and policies (the hash, the expiry layout, several keys per decision) is two FCALLs (the first, then the rest), decided in order', async () => {
        const ns = freshNamespace();
        const store = redisStore({ client: connection.client, ...ONE_BATCH_PER_ITERATION });
        const window = limits({ limit: 3, windowMs: 60_000 });
        const two = limits({ algorithm: 'gcra', limit: 2, windowMs: 60_000 }, { algorithm: 'sliding-window', limit: 10, windowMs: 60_000 });
        const named = limits({ algorithm: 'token-bucket', limit: 2, windowMs: 60_000, name: 'plan' });
        await admin.configResetStat();
        const asked = [
          ask(store, { namespace: ns, limits: window, key: 'a' }),
          ask(store, { namespace: ns, limits: two, key: 'b' }),
          ask(store, { namespace: ns, limits: named, key: 'c' }),
          ask(store, { namespace: ns, limits: window, key: 'a' }),
          ask(store, { namespace: ns, limits: two, key: 'b' }),
          ask(store, { namespace: ns, limits: two, key: 'b' }),
          ask(store, { namespace: ns, limits: named, key: 'c', cost: 2 }),
          ask(store, { namespace: ns, limits: window, key: 'a', cost: 2 }),
        ];
        const decisions = await Promise.all(asked);
        expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 1],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 1],
          [false, 1],
        ]);
        expect((await commandCalls(admin)).fcall).toBe(2);
      });

      it('sends at most maxBatchSize decisions in one call', async () => {
        const ns = freshNamespace();
        const store = redisStore({ client: connection.client, ...ONE_BATCH_PER_ITERATION, maxBatchSize: 10 });
        const policy = limits({ limit: 100, windowMs: 60_000 });
        await admin.configResetStat();
        const decisions = await Promise.all(Array.from({ length: 25 }, () => ask(store, { namespace: ns, limits: policy })));
        expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 25 }, (_, i) => 99 - i));
        // The first at once, then 24 in batches of 10, 10 and 4.
        expect((await commandCalls(admin)).fcall).toBe(4);
      });

      it('with coalesce: false, one FCALL per decision', async () => {
        const ns = freshNamespace();
        const { client, called } = spied(connection.client);
        const store = redisStore({ client, coalesce: false });
        const policy = limits({ limit: 100, windowMs: 60_000 });
        await Promise.all(Array.from({ length: 5 }, () => ask(store, { namespace: ns, limits: policy })));
        expect(called).toEqual(['lone', 'lone', 'lone', 'lone', 'lone']);
      });

      it('one decision that fails inside the batch (a key of the wrong type) rejects alone; the others are decided', async () => {
        const ns = freshNamespace();
        const store = redisStore({ client: connection.client, ...ONE_BATCH_PER_ITERATION });
        const policy = limits({ algorithm: 'sliding-window', limit: 5, windowMs: 60_000 }); // in the hash: HGET
        await admin.set(store.keyFor('bad', ns), 'not a hash');
        await admin.configResetStat();
        const settled = await Promise.allSettled(['good', 'bad', 'good', 'other'].map((key) => ask(store, { namespace: ns, limits: policy, key })));
        expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
        expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
        expect(String((settled[1] as PromiseRejectedResult).reason.message)).toMatch(/WRONGTYPE/);
        expect(settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.remaining] : []))).toEqual([4, 3, 4]);
        // The first at once; the failed one was in the batch with the other two.
        expect((await commandCalls(admin)).fcall).toBe(2);

        // Through a limiter: onStoreError answers the failed decision alone.
        const errors: unknown[] = [];
        const limiter = createLimiter({ limits: { algorithm: 'sliding-window', limit: 5, windowMs: 60_000 }, store, prefix: ns, onStoreError: 'deny', onError: (e) => errors.push(e) });
        await admin.set(store.keyFor('bad2', ns), 'not a hash');
        const [good, bad, other] = await Promise.all([limiter.consume('good2'), limiter.consume('bad2'), limiter.consume('other2')]);
        expect([good.allowed, good.remaining, bad.allowed, bad.retryAfterMs, other.allowed, other.remaining]).toEqual([true, 4, false, 1_000, true, 4]);
        expect(errors).toHaveLength(1);
      });

      it('a decision that times out in the limiter leaves its batch whole: the batch runs later, every decision in it charged once', async () => {
        const ns = freshNamespace();
        const store = redisStore({ client: connection.client });
        const errors: unknown[] = [];
        const limiter = createLimiter({ limits: { limit: 10, windowMs: 60_000 }, store, prefix: ns, storeTimeoutMs: 50, onStoreError: 'allow', onError: (e) => errors.push(e) });
        await admin.sendCommand(['CLIENT', 'PAUSE', '1000', 'ALL']);
        const started = performance.now();
        const decisions = await Promise.all(Array.from({ length: 4 }, async () => limiter.consume('k')));
        // They gave up after 50 ms instead of waiting out the 1 s pause: 750 ms of margin for a busy machine.
        expect(performance.now() - started).toBeLessThan(800);
        expect(decisions.every((d) => d.allowed)).toBe(true);
        expect(errors).toHaveLength(4);
        // The admin's PING answers once the pause is over (it was paused too). Then a peek without the
        // 50 ms bound, on the batch's own connection (answered in order, after the batch), finds the
        // key charged 4 times.
        await admin.ping();
        const reader = createLimiter({ limits: { limit: 10, windowMs: 60_000 }, store, prefix: ns });
        expect((await reader.peek('k')).remaining).toBe(6);
        expect(errors).toHaveLength(4);
      });

      it('on a client without FCALL, a busy iteration is one EVALSHA of the batch script', async () => {
        const ns = freshNamespace();
        const { client } = spied(connection.client, { scriptOnly: true });
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION });
        const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 60_000 });
        // The first batch loads the batch script (EVALSHA, NOSCRIPT, EVAL); decisions joined the
        // first, so the next iteration's first waits with the others: one call.
        await Promise.all([1, 2, 3].map(() => ask(store, { namespace: ns, limits: policy, key: 'warm' })));
        await admin.configResetStat();
        const decisions = await Promise.all(Array.from({ length: 6 }, () => ask(store, { namespace: ns, limits: policy })));
        expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4]);
        const calls = await commandCalls(admin);
        expect([calls.evalsha, calls.eval, calls.fcall]).toEqual([1, undefined, undefined]);
      });

      it('after FUNCTION FLUSH, a batch loads the library again and is decided', async () => {
        const ns = freshNamespace();
        const store = redisStore({ client: connection.client });
        const policy = limits({ limit: 10, windowMs: 60_000 });
        await admin.sendCommand(['FUNCTION', 'FLUSH']);
        const decisions = await Promise.all(Array.from({ length: 3 }, () => ask(store, { namespace: ns, limits: policy })));
        expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7]);
      });
    });
  }

  it('ioredis with enableAutoPipelining writes the commands of an iteration together: by default, the decisions after the first go as one batch, at the check phase', async () => {
    const pipelining = new Redis(server().url, { enableAutoPipelining: true });
    try {
      await new Promise<void>((resolve, reject) => pipelining.once('ready', resolve).once('error', reject));
      const { client, batchKeys } = spied(pipelining);
      const store = redisStore({ client });
      const ns = freshNamespace();
      const policy = limits({ limit: 100, windowMs: 60_000 });
      // The library loaded (a batch that finds no function would be sent again after FUNCTION LOAD).
      await ask(store, { namespace: ns, limits: policy, key: 'warm' });
      const asked = Array.from({ length: 24 }, () => ask(store, { namespace: ns, limits: policy }));
      expect(batchKeys).toEqual([]);
      expect((await Promise.all(asked)).map((d) => d.remaining)).toEqual(Array.from({ length: 24 }, (_, i) => 99 - i));
      expect(batchKeys.map((keys) => keys.length)).toEqual([23]);
    } finally {
      await pipelining.quit();
    }
  });
});

describeWithService(redisClusterService, 'redisStore coalescing on a Redis Cluster', (server) => {
  const CLUSTER_CLIENTS = {
    'node-redis createCluster': async () => {
      const cluster = createCluster({ rootNodes: parseClusterNodes(server().url).map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
      cluster.on('error', () => {});
      await cluster.connect();
      return { client: cluster satisfies RedisClientLike, close: () => cluster.close().then(() => undefined) };
    },
    'ioredis Cluster': async () => {
      const cluster = new Cluster(parseClusterNodes(server().url).map((node) => ({ host: node.host, port: node.port })));
      await new Promise<void>((resolve, reject) => cluster.once('ready', resolve).once('error', reject));
      return { client: cluster satisfies RedisClientLike, close: () => cluster.quit().then(() => undefined) };
    },
  } as const;

  for (const [clientName, connect] of Object.entries(CLUSTER_CLIENTS)) {
    it(`with ${clientName}: one batch per hash slot, every key of a batch on its slot, decided in order`, async () => {
      const connection = await connect();
      try {
        const { client, called, batchKeys } = spied(connection.client);
        const store = redisStore({ client, ...ONE_BATCH_PER_ITERATION, prefix: 'ratekit-coalesce:' });
        const ns = freshNamespace();
        const policy = limits({ limit: 10, windowMs: 60_000 });
        // 3 decisions on each of 20 keys (spread over the masters), in one turn.
        const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
        // First, every master of these keys gets the library (node-redis loads it on the node of the key that missed it): peeks, which charge nothing.
        await Promise.all(keys.map((key) => ask(store, { namespace: ns, limits: policy, key, mode: 'peek' })));
        called.length = 0;
        batchKeys.length = 0;
        const asked = [0, 1, 2].flatMap(() => keys.map((key) => ask(store, { namespace: ns, limits: policy, key })));
        const decisions = await Promise.all(asked);
        expect(decisions.map((d) => d.remaining)).toEqual([...keys.map(() => 9), ...keys.map(() => 8), ...keys.map(() => 7)]);
        const slots = new Set(keys.map((key) => calculateSlot(store.keysFor(key, ns, policy)[0]!)));
        // The peeks' iteration was busy, so this one's first waits with the others: one batch per slot.
        expect(called.filter((c) => c === 'lone')).toHaveLength(0);
        expect(batchKeys).toHaveLength(slots.size);
        for (const batch of batchKeys) expect(new Set(batch.map((key) => calculateSlot(key))).size).toBe(1);
      } finally {
        await connection.close();
      }
    });
  }
});
