import { createLimiter, RateKitOptionError, type RateLimitStore, resolveLimit } from '@ratekit/core';
import { ask, blockingLimit, describeWithService, freshNamespace, limits, privateRedisService, redisService, T0, testDifferential, testStore } from '@ratekit/test-utils';
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
  return ((await admin.sendCommand(['FUNCTION', 'LIST', 'LIBRARYNAME', DECISION_FUNCTION])) as unknown[]).length;
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
      await expect(ask(store, { namespace: '', limits: limits({ limit: 1, windowMs: 60_000 }) })).rejects.toThrow(
        /script admitted a request that @ratekit\/core refuses/,
      );
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
  });
});

describeWithService(redisService, 'redisStore on a real Redis', (server) => {
  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName}`, () => {
      const connections = new WeakMap<RateLimitStore, () => Promise<void>>();
      const open = async (options: { clock: 'server' | 'caller' }) => {
        const connection = await connect(server().url);
        const store = redisStore({ client: connection.client, clock: options.clock, prefix: 'ratekit-test:' });
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

      testStore({ name: `redis (${clientName})`, clock: 'server', makeStore: () => open({ clock: 'server' }), disposeStore });

      testDifferential({ name: `redis (${clientName})`, makeStore: () => open({ clock: 'caller' }), disposeStore });

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
          // Load the function library once, so the counts below see the steady state.
          await ask(store, { namespace: freshNamespace(), limits: limits({ limit: 1, windowMs: 1_000 }) });
        });
        afterAll(async () => {
          await connection.close();
          await admin.quit();
        });

        it.each([
          ['one limit', 'hget', limits({ limit: 10, windowMs: 60_000 })],
          ['a three-limit policy of different algorithms', 'hmget', limits({ limit: 10, windowMs: 60_000, name: 'a' }, { algorithm: 'gcra', limit: 5, windowMs: 1_000, name: 'b' }, { algorithm: 'sliding-log', limit: 50, windowMs: 3_600_000, name: 'c' })],
        ] as const)('%s: exactly one command (FCALL) per decision, counted by INFO commandstats', async (_, read, policy) => {
          const ns = freshNamespace();
          const n = 25;
          await admin.configResetStat();
          const decisions = await Promise.all(Array.from({ length: n }, (_, i) => ask(store, { namespace: ns, limits: policy, key: `k${i}` })));
          expect(decisions.every((d) => d.allowed)).toBe(true);
          // Inside the script: TIME, one read for all limits (HGET or HMGET), one HSET, PTTL and PEXPIRE (a new key each time).
          expect(await commandCalls(admin)).toEqual({ fcall: n, time: n, [read]: n, hset: n, pttl: n, pexpire: n });
        });

        it('a peek reads the clock and the state, and writes nothing', async () => {
          const ns = freshNamespace();
          const policy = limits({ limit: 5, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          expect((await ask(store, { namespace: ns, limits: policy, mode: 'peek' })).remaining).toBe(4);
          expect(await commandCalls(admin)).toEqual({ fcall: 1, time: 1, hget: 1 });
        });

        it('a busy key is not re-expired on every request: the TTL is read only when a state ends in a later second, and raised with headroom', async () => {
          const ns = freshNamespace();
          // T = 60 ms: 20 requests move the TAT by 1.2 s, into one or two later seconds.
          const policy = limits({ algorithm: 'gcra', limit: 1_000, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          for (let i = 0; i < 20; i++) await ask(store, { namespace: ns, limits: policy });
          const calls = await commandCalls(admin);
          expect([calls.fcall, calls.hset]).toEqual([20, 20]);
          expect(calls.pttl ?? 0).toBeLessThan(5);
          expect(calls.pexpire ?? 0).toBeLessThan(5);
        });

        it('a window counter within its window does not read the TTL: the key already outlives the window', async () => {
          const ns = freshNamespace();
          const policy = limits({ limit: 100, windowMs: 3_600_000 });
          await ask(store, { namespace: ns, limits: policy });
          await admin.configResetStat();
          for (let i = 0; i < 10; i++) await ask(store, { namespace: ns, limits: policy });
          expect(await commandCalls(admin)).toEqual({ fcall: 10, time: 10, hget: 10, hset: 10 });
          expect(await admin.pTTL(store.keyFor('client', ns))).toBeGreaterThan(3_600_000);
        });

        it('reads the TTL again, and raises it, as soon as a state ends in a later second than the one it replaces', async () => {
          const ns = freshNamespace();
          const key = store.keyFor('client', ns);
          const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 60_000 });
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
          const policy = limits({ limit: 1, windowMs: 60_000 });
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
            for (const [atMs, cost] of [[0, 1], [0, 1], [0, 1], [2_000, 1], [5_000, 1]] as const) {
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

        it('a script-only client still makes exactly one EVALSHA per decision', async () => {
          const store = redisStore({ client: scriptOnly(connection.client) });
          const ns = freshNamespace();
          const policy = limits({ limit: 10, windowMs: 60_000 });
          await ask(store, { namespace: ns, limits: policy, key: 'warm' });
          await admin.configResetStat();
          const n = 10;
          await Promise.all(Array.from({ length: n }, (_, i) => ask(store, { namespace: ns, limits: policy, key: `k${i}` })));
          expect(await commandCalls(admin)).toEqual({ evalsha: n, time: n, hget: n, hset: n, pttl: n, pexpire: n });
        });
      });
    });
  }
});
