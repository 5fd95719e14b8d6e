import { createLimiter, RateKitOptionError, type RateLimitStore, resolveLimit } from '@ratekit/core';
import {
  ask,
  askInTurn,
  blockingLimit,
  describeWithService,
  freshNamespace,
  limits,
  privateRedisService,
  redisService,
  T0,
  testCoalescing,
  testDifferential,
  testRefusalCacheDifferential,
  testStore,
} from '@ratekit/test-utils';
import { type Cluster, Redis } from 'ioredis';
import { createClient, type createCluster } from 'redis';
import { DECISION_FUNCTION, DECISION_SCRIPT_SHA, TTL_SLACK_MS } from './scripts.js';
import { type RedisClientLike, type RedisStore, redisStore } from './store.js';

// Compile-time: both clients' cluster types are accepted as they are (the Cluster run itself is elsewhere).
type Accepts<T> = T extends RedisClientLike ? true : false;
const clusterClientsAccepted: [Accepts<ReturnType<typeof createCluster>>, Accepts<Cluster>] = [true, true];
void clusterClientsAccepted;

/** A node-redis connection for inspecting the server. */
const connectAdmin = (url: string) => createClient({ url }).connect();
type NodeRedisClient = Awaited<ReturnType<typeof connectAdmin>>;

/** The client's script commands alone (no FCALL): a store on it sends the decision script, as it does on a server without functions. */
function scriptOnly(client: RedisClientLike): RedisClientLike {
  const c = client as unknown as Record<string, (...args: never[]) => Promise<unknown>>;
  const pick = (names: string[]) => Object.fromEntries(names.map((name) => [name, c[name]!.bind(client)]));
  return ('evalSha' in client ? pick(['evalSha', 'eval', 'del']) : pick(['evalsha', 'eval', 'del'])) as unknown as RedisClientLike;
}

/** The libraries named DECISION_FUNCTION on the server (0 or 1). */
async function librariesLoaded(admin: NodeRedisClient): Promise<number> {
  return (await admin.sendCommand<unknown[]>(['FUNCTION', 'LIST', 'LIBRARYNAME', DECISION_FUNCTION])).length;
}

/** The two supported clients, connected to `url`, with a uniform way to close them. */
const CLIENTS = {
  'node-redis': async (url: string) => {
    const client = await createClient({ url }).connect();
    return { client: client satisfies RedisClientLike, close: () => client.quit().then(() => undefined) };
  },
  ioredis: async (url: string) => {
    const client = new Redis(url, { enableAutoPipelining: true });
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client: client satisfies RedisClientLike, close: () => client.quit().then(() => undefined) };
  },
} as const;

/** Calls per command since the last `CONFIG RESETSTAT`, from `INFO commandstats`, without the admin's own commands. */
async function commandCalls(admin: NodeRedisClient): Promise<Record<string, number>> {
  const info = await admin.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const command = match[1]!;
    if (command === 'info' || command.startsWith('config')) continue;
    calls[command] = Number(match[2]);
  }
  return calls;
}

describe('redisStore options', () => {
  const fakeNodeRedis = { evalSha: async () => '', eval: async () => '', del: async () => 0 };

  it.each([
    ['no client', undefined],
    ['a string', 'redis://localhost'],
    ['an object without eval commands', { get: () => undefined }],
  ])('throws a coded option error for %s as the client', (_, client) => {
    expect(() => redisStore({ client: client as never })).toThrow(RateKitOptionError);
    expect(() => redisStore({ client: client as never })).toThrow(/`client` to be a node-redis \(redis 5\+\) or ioredis client or cluster/);
  });

  it.each(['rk:{x}', 'a{', 'b}'])('refuses a prefix with a brace (%s): the store owns the hash tag', (prefix) => {
    expect(() => redisStore({ client: fakeNodeRedis, prefix })).toThrow(/Expected `prefix` to be a string without `\{` or `\}`/);
  });

  it('refuses an unknown clock', () => {
    expect(() => redisStore({ client: fakeNodeRedis, clock: 'local' as never })).toThrow(/`clock` to be one of 'server', 'caller', got "local"/);
  });

  it('describes itself: shared, on the server clock by default', () => {
    const store = redisStore({ client: fakeNodeRedis });
    expect([store.name, store.shared, store.clock, store.prefix]).toEqual(['redis', true, 'server', 'ratekit:']);
  });

  describe('when the script and @ratekit/core disagree on the verdict', () => {
    it('rejects instead of reporting a decision that was not enforced', async () => {
      // A reply claiming admission on a fixed window whose single unit is already used.
      const lying = { ...fakeNodeRedis, evalSha: async () => `${T0} 1 ${T0},1` };
      const store = redisStore({ client: lying, clock: 'caller' });
      await expect(ask(store, { namespace: '', limits: limits({ limit: 1, windowMs: 60_000 }) })).rejects.toThrow(/script admitted a request that @ratekit\/core refuses/);
    });
  });

  describe('keys', () => {
    const store = redisStore({ client: fakeNodeRedis, prefix: 'app:' });

    it('puts the prefix first, then one hash tag around the length-prefixed namespace and the key', () => {
      expect(store.keyFor('203.0.113.7', 'api')).toBe('app:{3:api:203.0.113.7}');
      expect(store.keyFor('k', '')).toBe('app:{0::k}');
    });

    it('never builds the same Redis key for two different (namespace, key) pairs', () => {
      const pairs: Array<[string, string]> = [
        ['a', 'b:c'],
        ['a:b', 'c'],
        ['', '1:a:b'],
        ['1:a', 'b'],
        ['', '{3:api:x}'],
        ['api', 'x'],
        ['api', 'x}'],
        ['ap', 'i:x'],
      ];
      const keys = pairs.map(([namespace, key]) => store.keyFor(key, namespace));
      expect(new Set(keys).size).toBe(pairs.length);
    });

    it('on the server clock, keeps unnamed GCRA (whole-ms T and tau) and fixed windows (whole ms) without a block in keys of their own, with the hash tag of the key', () => {
      const window = limits({ limit: 10, windowMs: 60_000 });
      const tag = '{3:api:203.0.113.7}';
      expect(store.keysFor('203.0.113.7', 'api', window)).toEqual([`app:${window[0]!.id.length}:${window[0]!.id}${tag}`]);
      const mixed = limits({ limit: 10, windowMs: 60_000 }, { algorithm: 'gcra', limit: 5, windowMs: 1_000 }, { algorithm: 'sliding-log', limit: 5, windowMs: 1_000 });
      expect(store.keysFor('203.0.113.7', 'api', mixed)).toEqual([`app:${tag}`, ...mixed.slice(0, 2).map((l) => `app:${l.id.length}:${l.id}${tag}`)]);
    });

    it.each([
      ['a named limit (its parameters may change)', { limit: 10, windowMs: 60_000, name: 'plan' }],
      ['a block', { limit: 10, windowMs: 60_000, blockDurationMs: 1_000 }],
      ['GCRA of a fractional emission interval', { algorithm: 'gcra' as const, limit: 7, windowMs: 1_000 }],
      ['a fixed window of a fractional ms', { limit: 10, windowMs: 1_000.5 }],
      ['another algorithm', { algorithm: 'token-bucket' as const, limit: 10, windowMs: 1_000 }],
    ])('keeps %s in the hash', (_, limit) => {
      expect(store.keysFor('k', 'api', limits(limit))).toEqual(['app:{3:api:k}']);
    });

    it('on the caller clock, keeps every limit in the hash', () => {
      const caller = redisStore({ client: fakeNodeRedis, prefix: 'app:', clock: 'caller' });
      expect(caller.keysFor('k', 'api', limits({ limit: 10, windowMs: 60_000 }))).toEqual(['app:{3:api:k}']);
    });

    it('never builds the same Redis key for two different (namespace, key, limit) triples, nor one that is a hash', () => {
      const policies = [limits({ limit: 1, windowMs: 1_000 }), limits({ limit: 11, windowMs: 1_000 }), limits({ algorithm: 'gcra', limit: 1, windowMs: 1_000 })];
      const pairs: Array<[string, string]> = [
        ['a', 'b'],
        ['a', 'b}'],
        ['', '1:a:b'],
        ['1:a', 'b'],
      ];
      const keys = pairs.flatMap(([namespace, key]) => [store.keyFor(key, namespace), ...policies.map((policy) => store.keysFor(key, namespace, policy)[0]!)]);
      expect(new Set(keys).size).toBe(keys.length);
    });
  });
});

describeWithService(redisService, 'redisStore on a real Redis', (server) => {
  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName}`, () => {
      const connections = new WeakMap<RateLimitStore, () => Promise<void>>();
      const open = async (options: { clock: 'server' | 'caller'; coalesce?: boolean }) => {
        const connection = await connect(server().url);
        const store = redisStore({ client: connection.client, clock: options.clock, prefix: 'ratekit-test:', coalesce: options.coalesce ?? true });
        connections.set(store, connection.close);
        return store;
      };
      const disposeStore = (store: RateLimitStore) => connections.get(store)?.();

      testStore({
        name: `redis (${clientName})`,
        makeStore: () => open({ clock: 'caller' }),
        disposeStore,
        additionalTests: ({ store, namespace }) => {
          describe('keys and expiry in Redis', () => {
            let admin: NodeRedisClient;
            beforeAll(async () => {
              admin = await connectAdmin(server().url);
            });
            afterAll(() => admin.quit());

            it('keeps one hash per key, a field per limit id, with a TTL of the longest state plus the slack and headroom', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              const policy = limits({ limit: 5, windowMs: 60_000, name: 'minute' }, { algorithm: 'gcra', limit: 100, windowMs: 3_600_000, name: 'hour' });
              await ask(redis, { namespace: ns, limits: policy, key: 'user:1' });
              const key = redis.keyFor('user:1', ns);
              expect(await admin.type(key)).toBe('hash');
              expect((await admin.hKeys(key)).sort()).toEqual(['fixed-window:minute', 'gcra:hour']);
              // GCRA after one request: full again in one emission interval (36 s); the minute window: 60 s.
              // Expiry runs on a grid of whole slacks: past the end plus the slack, at most two slacks past the end.
              const needed = 60_000 + 2 * TTL_SLACK_MS;
              const ttl = await admin.pTTL(key);
              expect(ttl).toBeGreaterThan(60_000);
              expect(ttl).toBeLessThanOrEqual(needed + Math.max(2 * TTL_SLACK_MS, Math.floor(needed / 8)));
            });

            it('raises the TTL for a longer-lived state and never lowers it', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              const key = redis.keyFor('user:2', ns);
              await ask(redis, { namespace: ns, limits: limits({ limit: 5, windowMs: 3_600_000, name: 'hour' }), key: 'user:2' });
              expect(await admin.pTTL(key)).toBeGreaterThan(3_590_000);
              await ask(redis, { namespace: ns, limits: limits({ limit: 5, windowMs: 1_000, name: 'second' }), key: 'user:2' });
              expect(await admin.pTTL(key)).toBeGreaterThan(3_590_000);
              expect((await admin.hKeys(key)).sort()).toEqual(['fixed-window:hour', 'fixed-window:second']);
            });

            it('writes nothing for a peek and deletes a state that is gone (a GCRA refunded to full)', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              const key = redis.keyFor('user:3', ns);
              const policy = limits({ algorithm: 'gcra', limit: 5, windowMs: 60_000 });
              await ask(redis, { namespace: ns, limits: policy, key: 'user:3', mode: 'peek' });
              expect(await admin.exists(key)).toBe(0);
              await ask(redis, { namespace: ns, limits: policy, key: 'user:3' });
              expect(await admin.exists(key)).toBe(1);
              await ask(redis, { namespace: ns, limits: policy, key: 'user:3', mode: 'refund' });
              expect(await admin.exists(key)).toBe(0);
            });

            it('stores states as exact decimal numbers', async () => {
              const redis = store() as RedisStore;
              const ns = namespace();
              await ask(redis, { namespace: ns, limits: limits({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, name: 'b' }), key: 'f', cost: 0.1, nowMs: T0 + 0.5 });
              // 2.9 - 0.1 needs 17 digits; T0 + 0.5 is written with its fraction's exact 15 decimals.
              const stored = await admin.hGet(redis.keyFor('f', ns), 'token-bucket:b');
              expect(stored).toBe(`2.8999999999999999,${T0}.500000000000000`);
              expect(stored!.split(',').map(Number)).toEqual([3 - 0.1, T0 + 0.5]);
            });

            it('keeps stores with different prefixes apart on one server', async () => {
              const connection = await connect(server().url);
              try {
                const a = redisStore({ client: connection.client, clock: 'caller', prefix: 'a:' });
                const b = redisStore({ client: connection.client, clock: 'caller', prefix: 'a:b:' });
                const ns = namespace();
                const policy = limits({ limit: 1, windowMs: 60_000 });
                expect((await ask(a, { namespace: ns, limits: policy })).allowed).toBe(true);
                expect((await ask(b, { namespace: ns, limits: policy })).allowed).toBe(true);
                expect((await ask(a, { namespace: ns, limits: policy })).allowed).toBe(false);
              } finally {
                await connection.close();
              }
            });
          });
        },
      });

      // On the server clock GCRA and fixed-window limits have keys of their own (the expiry layout): reset needs the policy.
      testStore({ name: `redis (${clientName})`, clock: 'server', resetKeyNeedsLimits: true, makeStore: () => open({ clock: 'server' }), disposeStore });

      testDifferential({ name: `redis (${clientName})`, makeStore: () => open({ clock: 'caller' }), disposeStore });
      testRefusalCacheDifferential({ name: `redis (${clientName})`, makeStore: () => open({ clock: 'caller' }), disposeStore });

      // Coalescing never changes a decision: turns of concurrent decisions against one at a time (the in-memory store; on the server clock, the store without coalescing).
      testCoalescing({ name: `redis (${clientName})`, makeStore: () => open({ clock: 'caller' }), disposeStore });
      testCoalescing({ name: `redis (${clientName})`, clock: 'server', makeStore: () => open({ clock: 'server' }), makeReference: () => open({ clock: 'server', coalesce: false }), disposeStore });

      describe('when the connection is gone', () => {
        it('rejects (a store failure is never a refusal), and the limiter applies onStoreError', async () => {
          const connection = await connect(server().url);
          const store = redisStore({ client: connection.client });
          await connection.close();
          const request = { namespace: freshNamespace(), limits: limits({ limit: 1, windowMs: 1_000 }) };
          await expect(ask(store, request)).rejects.toThrow();
          const errors: unknown[] = [];
          const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, onStoreError: 'deny', onError: (e) => errors.push(e) });
          const decision = await limiter.consume('k');
          expect(decision.allowed).toBe(false);
          expect(errors).toHaveLength(1);
        });
      });
    });
  }

  describe('both clients on one Redis', () => {
    it('share the same state: the key layout and script do not depend on the client', async () => {
      const a = await CLIENTS['node-redis'](server().url);
      const b = await CLIENTS.ioredis(server().url);
      try {
        const viaNodeRedis = redisStore({ client: a.client });
        const viaIoredis = redisStore({ client: b.client });
        const ns = freshNamespace();
        const policy = [resolveLimit({ algorithm: 'gcra', limit: 2, windowMs: 3_600_000 })];
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

// Counting commands (CONFIG RESETSTAT, INFO commandstats) and SCRIPT FLUSH touch the whole
// server, so these run on a redis-server of their own even when REDIS_URL is set.
describeWithService(privateRedisService, 'redisStore round trips (on a Redis of its own)', (server) => {
  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName}`, () => {
      describe('round trips', () => {
        let admin: NodeRedisClient;
        let store: RedisStore;
        let connection: Awaited<ReturnType<typeof connect>>;
        beforeAll(async () => {
          admin = await connectAdmin(server().url);
          connection = await connect(server().url);
          store = redisStore({ client: connection.client, prefix: 'ratekit-rt:' });
          // Load the function library and read the server's time once (the limiter's clock stays at T0 below), so the counts see the steady state.
          await ask(store, { namespace: freshNamespace(), limits: limits({ limit: 1, windowMs: 1_000 }) });
        });
        afterAll(async () => {
          await connection.close();
          await admin.quit();
        });

        it.each([
          // Inside the script: TIME, one read for all limits (HGET or HMGET), one HSET, PTTL and PEXPIRE (a new key each time).
          ['one limit in the hash', limits({ algorithm: 'sliding-window', limit: 10, windowMs: 60_000 }), { time: 1, hget: 1, hset: 1, pttl: 1, pexpire: 1 }],
          [
            'a three-limit policy of different algorithms',
            limits({ limit: 10, windowMs: 60_000, name: 'a' }, { algorithm: 'gcra', limit: 5, windowMs: 1_000, name: 'b' }, { algorithm: 'sliding-log', limit: 50, windowMs: 3_600_000, name: 'c' }),
            { time: 1, hmget: 1, hset: 1, pttl: 1, pexpire: 1 },
          ],
          // The expiry layout: INCR makes the key, PTTL finds no TTL, PEXPIRE starts the window; no TIME.
          ['one fixed window in the expiry layout', limits({ limit: 10, windowMs: 60_000 }), { incr: 1, pttl: 1, pexpire: 1 }],
          ['one GCRA in the expiry layout', limits({ algorithm: 'gcra', limit: 10, windowMs: 60_000 }), { pttl: 1, set: 1 }],
        ] as const)(
          '%s: exactly one command (FCALL) per decision, counted by INFO commandstats; two for all of an iteration when coalesced (the first, then the batch)',
          async (_, policy, perDecision) => {
            const ns = freshNamespace();
            const n = 25;
            const inside = (times: number) => Object.fromEntries(Object.entries(perDecision).map(([name, calls]) => [name, calls * times]));
            const lone = redisStore({ client: connection.client, prefix: 'ratekit-rt:', coalesce: false });
            await ask(lone, { namespace: ns, limits: policy, key: 'warm' }); // reads the server's time once, as `store` did
            await admin.configResetStat();
            const decisions = await Promise.all(Array.from({ length: n }, (_, i) => ask(lone, { namespace: ns, limits: policy, key: `k${i}` })));
            expect(decisions.every((d) => d.allowed)).toBe(true);
            expect(await commandCalls(admin)).toEqual({ fcall: n, ...inside(n) });
            // Coalesced (the default): of the same decisions asked in one iteration, the first goes at once, the others in one FCALL.
            // (An iteration of one decision first: the store is open, whatever the tests before left it in.)
            await ask(store, { namespace: ns, limits: policy, key: 'open' });
            await admin.configResetStat();
            const coalesced = await Promise.all(Array.from({ length: n }, (_, i) => ask(store, { namespace: ns, limits: policy, key: `c${i}` })));
            expect(coalesced.every((d) => d.allowed)).toBe(true);
            expect(await commandCalls(admin)).toEqual({ fcall: 2, ...inside(n) });
          },
        );

        it('a peek reads the clock and the state, and writes nothing', async () => {
          const ns = freshNamespace();
          const policy = limits({ algorithm: 'sliding-window', limit: 5, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy, mode: 'peek' })).remaining).toBe(4);
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1 });
        });

        it('a busy key is not re-expired on every request: the TTL is read only when a state ends in a later second, and raised with headroom', async () => {
          const ns = freshNamespace();
          // T = 60.001 ms (not whole, so in the hash): 20 requests move the TAT by 1.2 s, into one or two later seconds.
          const policy = limits({ algorithm: 'gcra', limit: 1_000, windowMs: 60_001 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          for (let i = 0; i < 20; i++) await ask(store, { namespace: ns, limits: policy });
          const calls = await commandCalls(admin);
          expect([calls.fcall, calls.hset]).toEqual([20, 20]);
          expect(calls.pttl ?? 0).toBeLessThan(5);
          expect(calls.pexpire ?? 0).toBeLessThan(5);
        });

        it('a window counter in the hash, within its window, does not read the TTL: the key already outlives the window', async () => {
          const ns = freshNamespace();
          const policy = limits({ algorithm: 'sliding-window', limit: 100, windowMs: 3_600_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          for (let i = 0; i < 10; i++) await ask(store, { namespace: ns, limits: policy });
          expect(await commandCalls(admin)).toEqual({ fcall: 10, time: 10, hget: 10, hset: 10 });
          // A sliding window's state lasts until the end of the next window (windows are aligned to the epoch).
          expect(await admin.pTTL(store.keyFor('client', ns))).toBeGreaterThan(3_600_000);
        });

        it('reads the TTL again, and raises it, as soon as a state ends in a later second than the one it replaces', async () => {
          const ns = freshNamespace();
          const key = store.keyFor('client', ns);
          // T = 6,000.1 ms: not whole, so in the hash.
          const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 60_001 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          // Each request moves the TAT 6 s later: the state ends in a later second than the previous one.
          await ask(store, { namespace: ns, limits: policy });
          // Beyond the headroom of the first TTL (about 1 s past the first state's end + slack): raised.
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1, hset: 1, pttl: 1, pexpire: 1 });
          expect(await admin.pTTL(key)).toBeGreaterThan(12_000 + TTL_SLACK_MS - 100);
        });

        it('a named limit reads the TTL on every write: its state may come from other parameters (a plan upgrade)', async () => {
          const ns = freshNamespace();
          const key = store.keyFor('client', ns);
          // The same field (same algorithm and name): first a 1 s window, then a 1 h one, within the first window.
          await ask(store, { namespace: ns, limits: limits({ limit: 100, windowMs: 1_000, name: 'plan' }) });
          expect(await admin.pTTL(key)).toBeLessThanOrEqual(1_000 + 4 * TTL_SLACK_MS);
          await admin.configResetStat();
          await ask(store, { namespace: ns, limits: limits({ limit: 100, windowMs: 3_600_000, name: 'plan' }) });
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1, hset: 1, pttl: 1, pexpire: 1 });
          expect(await admin.pTTL(key)).toBeGreaterThan(3_590_000);
        });

        it('a refused request costs one command too, and writes nothing', async () => {
          const ns = freshNamespace();
          const policy = limits({ algorithm: 'sliding-window', limit: 1, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy })).allowed).toBe(false);
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1 });
        });

        it('a refusal that starts a block is one command that writes the block; a refusal during it writes nothing', async () => {
          const ns = freshNamespace();
          const policy = limits({ limit: 1, windowMs: 60_000, blockDurationMs: 120_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          const refused = await ask(store, { namespace: ns, limits: policy });
          expect([refused.allowed, refused.retryAfterMs]).toEqual([false, 120_000]);
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1, hset: 1, pttl: 1, pexpire: 1 });
          const key = store.keyFor('client', ns);
          const [field] = await admin.hKeys(key);
          // The fixed window's state, then the blocked-until time (the server clock's now + 120 s).
          expect((await admin.hGet(key, field!))!.split(',').map(Number)).toEqual([expect.any(Number), 1, refused.nowMs + 120_000]);
          expect(await admin.pTTL(key)).toBeGreaterThan(120_000);
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy })).allowed).toBe(false);
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1 });
        });

        it.each([
          ['the function (FCALL)', false],
          ['the script (EVALSHA, as on Redis < 7)', true],
        ] as const)('a flood on a locked-out key (the login recipe) costs one store call per block with the refusal cache, and sends every request to the store without: %s', async (_, script) => {
          const client = script ? scriptOnly(connection.client) : connection.client;
          const USERNAME = { limit: 5, windowMs: 15 * 60_000, blockDurationMs: 15 * 60_000, name: 'login-username' };
          const flood = async (refusalCache: boolean) => {
            const limiter = createLimiter({ limits: USERNAME, store: redisStore({ client, prefix: 'ratekit-rt:' }), prefix: freshNamespace(), refusalCache, storeTimeoutMs: 5_000 });
            await limiter.consume('warm'); // loads the code and reads the server's time once
            await admin.configResetStat();
            const decisions = [];
            for (let i = 0; i < 200; i++) decisions.push(await limiter.consume('alice'));
            // Ten turns of 20 at once: what reaches the store goes coalesced (a batch call).
            for (let turn = 0; turn < 10; turn++) decisions.push(...(await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(limiter.consume('alice'))))));
            const calls = await commandCalls(admin);
            return { decisions, calls: (calls['fcall'] ?? 0) + (calls['evalsha'] ?? 0) + (calls['eval'] ?? 0) };
          };
          const plain = await flood(false);
          const cached = await flood(true);
          expect(cached.decisions.map((d) => [d.allowed, d.remaining])).toEqual(plain.decisions.map((d) => [d.allowed, d.remaining]));
          expect(cached.decisions.filter((d) => d.allowed)).toHaveLength(5);
          // The refusal that blocks, as the store answered it: the block's whole length left.
          expect(cached.decisions[5]!.source).toBeUndefined();
          expect(cached.decisions[5]!.limits[0]!.blockedMs).toBe(15 * 60_000);
          const fromCache = cached.decisions.filter((d) => d.source === 'cache');
          expect(fromCache).toHaveLength(400 - 6);
          expect(fromCache.every((d) => d.limits[0]!.blockedMs! > 0 && d.limits[0]!.blockedMs! <= 15 * 60_000)).toBe(true);
          // Without the cache every request reaches the store (a turn's 20 in one or two calls, coalesced); with it, 6 calls in all.
          expect(plain.calls).toBeGreaterThanOrEqual(200 + 10);
          expect(cached.calls).toBe(6);
          process.stderr.write(`[ratekit tests] login flood of 400 on ${script ? 'EVALSHA' : 'FCALL'}: ${plain.calls} store calls without the refusal cache, ${cached.calls} with it\n`);
        });

        it('the script (EVALSHA, as on Redis < 7) blocks as the function does', async () => {
          const scripted = redisStore({ client: scriptOnly(connection.client), prefix: 'ratekit-rt:', clock: 'caller' });
          const ns = freshNamespace();
          for (const [one, two] of [
            ['fixed-window', 'sliding-log'],
            ['gcra', 'token-bucket'],
            ['delay', 'sliding-window'],
          ] as const) {
            const policy = limits({ ...blockingLimit(one), name: 'a' }, { ...blockingLimit(two), limit: 3, name: 'b' });
            const key = `${one}+${two}`;
            const seen = [];
            for (const [atMs, cost] of [
              [0, 1],
              [0, 1],
              [0, 1],
              [2_000, 1],
              [5_000, 1],
            ] as const) {
              const d = await ask(scripted, { namespace: ns, key, limits: policy, cost, nowMs: T0 + atMs });
              seen.push([atMs, d.allowed, d.retryAfterMs, d.limits.map((l) => l.remaining)]);
            }
            expect(seen).toEqual([
              [0, true, 0, [1, 2]],
              [0, true, 0, [0, 1]],
              [0, false, 5_000, [0, 1]],
              [2_000, false, 3_000, [0, expect.any(Number)]],
              [5_000, true, 0, [1, expect.any(Number)]],
            ]);
          }
          const single = limits(blockingLimit('gcra'));
          await ask(scripted, { namespace: ns, key: 'one', limits: single });
          await ask(scripted, { namespace: ns, key: 'one', limits: single });
          expect((await ask(scripted, { namespace: ns, key: 'one', limits: single })).retryAfterMs).toBe(5_000);
          expect((await ask(scripted, { namespace: ns, key: 'one', limits: single, nowMs: T0 + 4_000 })).retryAfterMs).toBe(1_000);
        });

        describe('the expiry layout (server clock): unnamed GCRA of whole-ms intervals and fixed windows of whole ms, in keys of their own', () => {
          it('a fixed window: the count in a key that expires with the window; INCR and PTTL per admitted consume of 1, no TIME', async () => {
            const ns = freshNamespace();
            const policy = limits({ limit: 5, windowMs: 60_000 });
            const [key] = store.keysFor('client', ns, policy);
            expect(key).toBe(`ratekit-rt:${policy[0]!.id.length}:${policy[0]!.id}${store.keyFor('client', ns).slice('ratekit-rt:'.length)}`);
            await ask(store, { namespace: ns, limits: policy });
            await admin.configResetStat();
            const seen = await askInTurn(store, { namespace: ns, limits: policy }, 2);
            expect(seen.map((d) => d.remaining)).toEqual([3, 2]);
            expect(await commandCalls(admin)).toEqual({ fcall: 2, incr: 2, pttl: 2 });
            expect(await admin.get(key!)).toBe('3');
            const ttl = await admin.pTTL(key!);
            expect(ttl).toBeGreaterThan(55_000);
            expect(ttl).toBeLessThanOrEqual(60_000);
            expect(await admin.exists(store.keyFor('client', ns))).toBe(0);
          });

          it('a refused consume gives its count back in the same call (INCR, PTTL, DECR): the count is as before', async () => {
            const ns = freshNamespace();
            const policy = limits({ limit: 1, windowMs: 60_000 });
            await ask(store, { namespace: ns, limits: policy });
            await admin.configResetStat();
            const refused = await ask(store, { namespace: ns, limits: policy });
            expect([refused.allowed, refused.remaining]).toEqual([false, 0]);
            expect(refused.retryAfterMs).toBeGreaterThan(55_000);
            expect(await commandCalls(admin)).toEqual({ fcall: 1, incr: 1, pttl: 1, decr: 1 });
            expect(await admin.get(store.keysFor('client', ns, policy)[0]!)).toBe('1');
          });

          it('a whole cost above 1 takes INCRBY, and DECRBY when refused', async () => {
            const ns = freshNamespace();
            const policy = limits({ limit: 5, windowMs: 60_000 });
            await ask(store, { namespace: ns, limits: policy });
            await admin.configResetStat();
            const admitted = await ask(store, { namespace: ns, limits: policy, cost: 3 });
            const refused = await ask(store, { namespace: ns, limits: policy, cost: 2 });
            expect([admitted.allowed, admitted.remaining, refused.allowed, refused.remaining]).toEqual([true, 1, false, 1]);
            expect(await commandCalls(admin)).toEqual({ fcall: 2, incrby: 2, pttl: 2, decrby: 1 });
            expect(await admin.get(store.keysFor('client', ns, policy)[0]!)).toBe('4');
          });

          it('GCRA: the key lives until the TAT; PTTL and SET per admitted consume, PTTL alone for a refusal', async () => {
            const ns = freshNamespace();
            // T = 1,000 ms, tau = 3,000 ms.
            const policy = limits({ algorithm: 'gcra', limit: 3, windowMs: 3_000 });
            const [key] = store.keysFor('client', ns, policy);
            await admin.configResetStat();
            const seen = await askInTurn(store, { namespace: ns, limits: policy }, 4);
            expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([
              [true, 2],
              [true, 1],
              [true, 0],
              [false, 0],
            ]);
            // SET makes the key; PEXPIRE moves its expiry (the TAT) then.
            expect(await commandCalls(admin)).toEqual({ fcall: 4, pttl: 4, set: 1, pexpire: 2 });
            const ttl = await admin.pTTL(key!);
            expect(ttl).toBeGreaterThan(2_500);
            expect(ttl).toBeLessThanOrEqual(3_000);
          });

          it('a policy of several limits reads and writes the limit in the expiry layout in its own key, so one-limit policies of it see the same state', async () => {
            const ns = freshNamespace();
            const window = { limit: 10, windowMs: 60_000 };
            const policy = limits(window, { algorithm: 'sliding-window', limit: 10, windowMs: 60_000 });
            const keys = store.keysFor('client', ns, policy);
            expect(keys).toEqual([store.keyFor('client', ns), store.keysFor('client', ns, limits(window))[0]]);
            await ask(store, { namespace: ns, limits: policy });
            await ask(store, { namespace: ns, limits: policy });
            expect(await admin.get(keys[1]!)).toBe('2');
            expect(await admin.hKeys(keys[0]!)).toEqual([policy[1]!.id]);
            expect((await ask(store, { namespace: ns, limits: limits(window) })).remaining).toBe(7);
            expect((await ask(store, { namespace: ns, limits: policy, mode: 'peek' })).limits.map((l) => l.remaining)).toEqual([7, 8]);
            await store.resetKey('client', ns, policy);
            expect(await admin.exists(keys)).toBe(0);
          });

          it('a policy of several limits all in the expiry layout is decided without TIME too, each limit in its key', async () => {
            const ns = freshNamespace();
            // A fixed window and a GCRA of T = 1,000 ms (tau 10,000 ms), both unnamed.
            const policy = limits({ limit: 5, windowMs: 60_000 }, { algorithm: 'gcra', limit: 10, windowMs: 10_000 });
            await admin.configResetStat();
            const seen = await askInTurn(store, { namespace: ns, limits: policy }, 3);
            expect(seen.map((d) => d.limits.map((l) => l.remaining))).toEqual([
              [4, 9],
              [3, 8],
              [2, 7],
            ]);
            const calls = await commandCalls(admin);
            expect([calls.fcall, calls.time, calls.hmget, calls.hset]).toEqual([3, undefined, undefined, undefined]);
            const [hash, window, bucket] = store.keysFor('client', ns, policy);
            expect([await admin.exists(hash!), await admin.get(window!)]).toEqual([0, '3']);
            const ttl = await admin.pTTL(bucket!);
            expect(ttl).toBeGreaterThan(2_500);
            expect(ttl).toBeLessThanOrEqual(3_000);
          });

          it('a fractional cost on a fixed window is counted exactly (the count is read and written, as INCRBY takes whole numbers)', async () => {
            const ns = freshNamespace();
            const policy = limits({ limit: 3, windowMs: 60_000 });
            const remaining = [];
            for (const cost of [0.5, 1, 0.25]) remaining.push((await ask(store, { namespace: ns, limits: policy, cost })).limits[0]!.tokensAfter);
            expect(remaining).toEqual([2.5, 1.5, 1.25]);
            // Written as an exact decimal (see DECISION_CODE), read back as the same double.
            expect(Number(await admin.get(store.keysFor('client', ns, policy)[0]!))).toBe(1.75);
          });

          it("decisions carry the server's time: read with TIME once a second of the limiter's clock, the limiter's clock plus that offset in between", async () => {
            const fresh = redisStore({ client: connection.client, prefix: 'ratekit-rt:' });
            const ns = freshNamespace();
            const policy = limits({ limit: 100, windowMs: 60_000 });
            await admin.configResetStat();
            const first = await ask(fresh, { namespace: ns, limits: policy, nowMs: 1_000 });
            const later = await ask(fresh, { namespace: ns, limits: policy, nowMs: 1_500 });
            expect((await commandCalls(admin)).time).toBe(1);
            expect(Math.abs(first.nowMs - Date.now())).toBeLessThan(5_000);
            expect(later.nowMs - first.nowMs).toBe(500);
            await ask(fresh, { namespace: ns, limits: policy, nowMs: 2_000 });
            expect((await commandCalls(admin)).time).toBe(2);
          });
        });
      });

      describe('when the server has lost the code (Function not found, NOSCRIPT)', () => {
        let admin: NodeRedisClient;
        let connection: Awaited<ReturnType<typeof connect>>;
        beforeAll(async () => {
          admin = await connectAdmin(server().url);
          connection = await connect(server().url);
        });
        afterAll(async () => {
          await connection.close();
          await admin.quit();
        });

        it('loads the function library again with FUNCTION LOAD, decides correctly, and goes back to one FCALL', async () => {
          const store = redisStore({ client: connection.client, clock: 'caller' });
          const ns = freshNamespace();
          const policy = limits({ limit: 3, windowMs: 60_000 });
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(2);
          expect(await librariesLoaded(admin)).toBe(1);
          await admin.sendCommand(['FUNCTION', 'FLUSH']);
          expect(await librariesLoaded(admin)).toBe(0);
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(1);
          expect(await librariesLoaded(admin)).toBe(1);
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(0);
          // The failed FCALL, FUNCTION LOAD, the FCALL again; then one FCALL (the caller's clock: no TIME, always PTTL).
          expect(await commandCalls(admin)).toEqual({ fcall: 3, 'function|load': 1, 'function|list': 1, hget: 2, hset: 2, pttl: 2 });
        });

        it('without functions (a client without FCALL): the script, loaded again with EVAL on NOSCRIPT, then EVALSHA', async () => {
          const store = redisStore({ client: scriptOnly(connection.client), clock: 'caller' });
          const ns = freshNamespace();
          const policy = limits({ limit: 3, windowMs: 60_000 });
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(2);
          await admin.scriptFlush();
          expect(await admin.scriptExists(DECISION_SCRIPT_SHA)).toEqual([0]);
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(1);
          expect(await admin.scriptExists(DECISION_SCRIPT_SHA)).toEqual([1]);
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(0);
          const calls = await commandCalls(admin);
          expect([calls.evalsha, calls.eval, calls.hget, calls.fcall]).toEqual([2, 1, 2, undefined]);
        });

        /** Three decisions at a limit of 3 (caller's clock): the first may try functions; the next two are the script alone, one EVALSHA each. */
        async function expectTheScriptForGood(store: RedisStore): Promise<void> {
          const ns = freshNamespace();
          const policy = limits({ limit: 3, windowMs: 60_000 });
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(2);
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(1);
          expect((await ask(store, { namespace: ns, limits: policy })).remaining).toBe(0);
          expect(await commandCalls(admin)).toEqual({ evalsha: 2, hget: 2, hset: 2, pttl: 2 });
        }

        it('when FUNCTION LOAD fails, whatever the error: the script decides, and stays in use for good', async () => {
          // The client's raw command path refuses FUNCTION (as a proxy or a managed service might); FCALL itself works.
          const raw = connection.client as unknown as Record<string, unknown>;
          const refusing = new Proxy(raw, {
            get(target, name) {
              const value = Reflect.get(target, name) as unknown;
              if (name === 'sendCommand' || name === 'call') {
                return (...args: unknown[]) =>
                  args.flat().includes('FUNCTION') ? Promise.reject(new Error('ERR this proxy does not forward FUNCTION')) : (value as (...a: unknown[]) => unknown).apply(target, args);
              }
              return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
            },
          }) as unknown as RedisClientLike;
          await admin.sendCommand(['FUNCTION', 'FLUSH']);
          await expectTheScriptForGood(redisStore({ client: refusing, clock: 'caller' }));
        });

        it('when the user may not call functions (ACL): the script, for good', async () => {
          const user = `ratekit-nofn-${freshNamespace()}`;
          await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>ratekit-test', '~*', '&*', '+@all', '-fcall', '-function']);
          const url = new URL(server().url);
          url.username = user;
          url.password = 'ratekit-test';
          const limited = await connect(url.toString());
          try {
            await expectTheScriptForGood(redisStore({ client: limited.client, clock: 'caller' }));
          } finally {
            await limited.close();
            await admin.sendCommand(['ACL', 'DELUSER', user]);
          }
        });

        it("the script's fast path (consume 1 of one fixed window in the expiry layout) decides as the function does, and only that request", async () => {
          const scripted = redisStore({ client: scriptOnly(connection.client) });
          const functions = redisStore({ client: connection.client });
          const cases: [string, ReturnType<typeof limits>, number[]][] = [
            // A new window, admitted to the limit, then refused (its count given back); costs of 1 only: the fast path.
            ['one fixed window', limits({ limit: 3, windowMs: 60_000 }), [1, 1, 1, 1, 1]],
            // Costs other than 1, then a fractional count in the key: the whole code, after the fast path let it through.
            ['other costs', limits({ limit: 4, windowMs: 60_000 }), [2, 1, 0.5, 1, 1]],
            // The argument starts as the fast path's does, and another limit follows: the whole code.
            ['a fixed window and a GCRA', limits({ limit: 3, windowMs: 60_000 }, { algorithm: 'gcra', limit: 2, windowMs: 2_000 }), [1, 1, 1, 1]],
            // A limit with a block names its algorithm fixed-window/<ms>, and a named one is kept in the hash.
            ['a block', limits({ limit: 2, windowMs: 60_000, blockDurationMs: 120_000 }), [1, 1, 1, 1]],
            ['a named limit', limits({ limit: 2, windowMs: 60_000, name: 'plan' }), [1, 1, 1]],
          ];
          for (const [label, policy, costs] of cases) {
            const seen = async (store: RedisStore) => {
              const ns = freshNamespace();
              const out: [boolean, number][] = [];
              for (const cost of costs) {
                const d = await ask(store, { namespace: ns, limits: policy, cost });
                out.push([d.allowed, d.remaining]);
              }
              return out;
            };
            expect([label, await seen(scripted)]).toEqual([label, await seen(functions)]);
          }
          // The fast path alone: INCR and PTTL (DECR on a refusal), nothing else read or written.
          const ns = freshNamespace();
          const policy = limits({ limit: 1, windowMs: 60_000 });
          await ask(scripted, { namespace: ns, limits: policy });
          await admin.configResetStat();
          expect((await ask(scripted, { namespace: ns, limits: policy })).allowed).toBe(false);
          expect(await commandCalls(admin)).toEqual({ evalsha: 1, incr: 1, pttl: 1, decr: 1 });
        });

        it('a script-only client still makes exactly one EVALSHA per decision', async () => {
          const store = redisStore({ client: scriptOnly(connection.client) });
          const ns = freshNamespace();
          const policy = limits({ limit: 10, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy, key: 'warm' });
          await admin.configResetStat();
          const n = 10;
          for (let i = 0; i < n; i++) await ask(store, { namespace: ns, limits: policy, key: `k${i}` });
          // The expiry layout (a fixed window): INCR, PTTL and PEXPIRE for a new window.
          expect(await commandCalls(admin)).toEqual({ evalsha: n, incr: n, pttl: n, pexpire: n });
        });
      });
    });
  }
});
