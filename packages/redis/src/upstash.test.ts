// The Upstash store against a real Redis behind a local endpoint speaking Upstash's REST protocol
// (@ratekit/test-utils' startUpstashRestServer), through the real @upstash/redis client.
import { createLimiter, RateKitError, RateKitOptionError } from '@ratekit/core';
import { ask, describeWithService, freshNamespace, limits, privateRedisService, redisService, startUpstashRestServer, testDifferential, testStore, type UpstashRestServer } from '@ratekit/test-utils';
import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import { DECISION_SCRIPT_SHA } from './scripts.js';
import { redisStore } from './store.js';
import { scriptSha, type UpstashRedisLike, upstashStore } from './upstash.js';

type NodeRedis = Awaited<ReturnType<typeof connect>>;
const connect = (url: string) => createClient({ url }).connect();

/** An @upstash/redis client of `rest`: no retries (a dead endpoint fails at once), no telemetry headers. */
function upstashClient(rest: UpstashRestServer, options: { responseEncoding?: false } = {}): Redis {
  return new Redis({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false, ...options });
}

// Compile-time: the real client is accepted as it is.
const accepts = (redis: Redis): UpstashRedisLike => redis;
void accepts;

describe('upstashStore options', () => {
  const fake: UpstashRedisLike = { evalsha: async () => '', eval: async () => '', del: async () => 0 };

  it.each([
    ['no client', undefined],
    ['a URL', 'https://example.upstash.io'],
    ['a client without evalsha', { eval: async () => '', del: async () => 0 }],
  ])('throws a coded option error for %s as redis', (_, redis) => {
    expect(() => upstashStore({ redis: redis as never })).toThrow(RateKitOptionError);
    expect(() => upstashStore({ redis: redis as never })).toThrow(/Expected `redis` to be an @upstash\/redis client \(with evalsha, eval and del\)/);
  });

  it('refuses a prefix with a brace and an unknown clock', () => {
    expect(() => upstashStore({ redis: fake, prefix: 'a{' })).toThrow(/Expected `prefix` to be a string without `\{` or `\}`/);
    expect(() => upstashStore({ redis: fake, clock: 'local' as never })).toThrow(/`clock` to be one of 'server', 'caller', got "local"/);
  });

  it('describes itself and names keys exactly as @ratekit/redis does', () => {
    const store = upstashStore({ redis: fake, prefix: 'app:' });
    const tcp = redisStore({ client: { evalSha: async () => '', eval: async () => '', del: async () => 0 }, prefix: 'app:' });
    const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, { name: 'daily', limit: 1_000, windowMs: 86_400_000 });
    expect([store.name, store.shared, store.clock, store.prefix]).toEqual(['upstash', true, 'server', 'app:']);
    expect(store.keyFor('203.0.113.7', 'api')).toBe(tcp.keyFor('203.0.113.7', 'api'));
    expect(store.keysFor('k', 'api', policy)).toEqual(tcp.keysFor('k', 'api', policy));
  });

  it("computes the script's SHA-1 with Web Crypto, equal to node:crypto's", async () => {
    await expect(scriptSha()).resolves.toBe(DECISION_SCRIPT_SHA);
  });
});

describeWithService(redisService, 'upstashStore over a local Upstash REST endpoint, on a real Redis', (server) => {
  let admin: NodeRedis;
  let rest: UpstashRestServer;
  beforeAll(async () => {
    admin = await connect(server().url);
    rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
  });
  afterAll(async () => {
    await rest.close();
    await admin.quit();
  });
  const open = (clock: 'server' | 'caller') => upstashStore({ redis: upstashClient(rest), clock, prefix: 'ratekit-upstash-test:' });

  testStore({ name: 'upstash (caller clock)', makeStore: () => open('caller') });
  testStore({ name: 'upstash (server clock)', clock: 'server', resetKeyNeedsLimits: true, makeStore: () => open('server') });
  testDifferential({ name: 'upstash', makeStore: () => open('caller') });

  describe('requests', () => {
    it.each([
      ['a fixed window alone (the expiry layout)', limits({ limit: 5, windowMs: 60_000 })],
      [
        'a three-limit policy',
        limits(
          { algorithm: 'gcra', limit: 10, windowMs: 1_000 },
          { algorithm: 'sliding-window', limit: 100, windowMs: 60_000 },
          { name: 'daily', algorithm: 'token-bucket', limit: 1_000, windowMs: 86_400_000 },
        ),
      ],
    ])('decides %s in one HTTP request, an EVALSHA', async (_, policy) => {
      const store = open('server');
      const namespace = freshNamespace('requests');
      await ask(store, { namespace, limits: policy }); // the script is cached on the server after this one at the latest
      const before = rest.requests();
      const from = rest.commands.length;
      for (let i = 0; i < 3; i++) await ask(store, { namespace, limits: policy, nowMs: Date.now() });
      expect(rest.requests() - before).toBe(3);
      expect(rest.commands.slice(from).map((command) => command[0]!.toLowerCase())).toEqual(['evalsha', 'evalsha', 'evalsha']);
    });

    it('decides the same with and without base64 replies (Upstash-Encoding)', async () => {
      const plain = upstashStore({ redis: upstashClient(rest, { responseEncoding: false }), clock: 'caller', prefix: 'ratekit-upstash-test:' });
      const encoded = open('caller');
      const policy = limits({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000 });
      const [a, b] = [freshNamespace('plain'), freshNamespace('b64')];
      for (let i = 0; i < 5; i++) {
        const nowMs = 1_700_000_000_000 + i * 100;
        const [x, y] = [await ask(plain, { namespace: a, limits: policy, nowMs }), await ask(encoded, { namespace: b, limits: policy, nowMs })];
        expect(x).toEqual(y);
      }
    });

    it('shares state with the TCP store on the same prefix: one budget, whichever client decides', async () => {
      const tcp = redisStore({ client: admin, prefix: 'ratekit-upstash-test:', coalesce: false });
      const http = open('server');
      const namespace = freshNamespace('shared');
      const policy = limits({ algorithm: 'gcra', limit: 4, windowMs: 60_000 });
      const allowed: boolean[] = [];
      for (let i = 0; i < 6; i++) allowed.push((await ask(i % 2 === 0 ? http : tcp, { namespace, limits: policy, nowMs: Date.now() })).allowed);
      expect(allowed).toEqual([true, true, true, true, false, false]);
    });
  });

  describe('failures', () => {
    it('rejects a Redis error (a key of the wrong type) with ERR_RATEKIT_STORE; the limiter applies onStoreError', async () => {
      const namespace = freshNamespace('wrongtype');
      const store = upstashStore({ redis: upstashClient(rest), clock: 'caller', prefix: 'ratekit-upstash-test:' });
      await admin.set(store.keyFor('k', namespace), 'not a hash', { PX: 60_000 });
      const error = await ask(store, { key: 'k', namespace, limits: limits({ algorithm: 'gcra', limit: 5, windowMs: 1_000 }) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateKitError);
      expect((error as RateKitError).code).toBe('ERR_RATEKIT_STORE');
      expect((error as Error).message).toMatch(/WRONGTYPE/);

      const reported: unknown[] = [];
      const limiter = createLimiter({ limits: [{ algorithm: 'gcra', limit: 5, windowMs: 1_000 }], store, prefix: namespace, onStoreError: 'allow', onError: (e) => reported.push(e) });
      // The limiter's prefix is the namespace: the same hash, still a string.
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect(reported).toHaveLength(1);
    });

    it('rejects with ERR_RATEKIT_STORE when the endpoint is down, never hanging', async () => {
      const down = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
      const client = upstashClient(down);
      await down.close();
      const store = upstashStore({ redis: client, clock: 'caller', prefix: 'ratekit-upstash-test:' });
      const error = await ask(store, { namespace: freshNamespace('down'), limits: limits({ limit: 5, windowMs: 1_000 }) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateKitError);
      expect((error as RateKitError).code).toBe('ERR_RATEKIT_STORE');
      const reset = await upstashStore({ redis: client })
        .resetKey('k', 'ns')
        .catch((e: unknown) => e);
      expect((reset as RateKitError).code).toBe('ERR_RATEKIT_STORE');
    });

    it('refuses a wrong token: Upstash answers 401', async () => {
      const store = upstashStore({ redis: new Redis({ url: rest.url, token: 'wrong', retry: false, enableTelemetry: false }), clock: 'caller' });
      const error = await ask(store, { namespace: freshNamespace('token'), limits: limits({ limit: 5, windowMs: 1_000 }) }).catch((e: unknown) => e);
      expect((error as RateKitError).code).toBe('ERR_RATEKIT_STORE');
      expect((error as Error).message).toMatch(/Unauthorized/);
    });
  });
});

// SCRIPT FLUSH touches the whole server: on a redis-server of its own.
describeWithService(privateRedisService, 'upstashStore when the server lost the script (on a Redis of its own)', (server) => {
  it('falls back to EVAL on NOSCRIPT, which caches the script for the next EVALSHA', async () => {
    const admin = await connect(server().url);
    const rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
    try {
      const store = upstashStore({ redis: upstashClient(rest) });
      const namespace = freshNamespace('noscript');
      const policy = limits({ algorithm: 'sliding-window', limit: 2, windowMs: 60_000 });
      await admin.scriptFlush();
      const from = rest.commands.length;
      const decisions = [await ask(store, { namespace, limits: policy }), await ask(store, { namespace, limits: policy }), await ask(store, { namespace, limits: policy })];
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
      expect(rest.commands.slice(from).map((command) => command[0]!.toLowerCase())).toEqual(['evalsha', 'eval', 'evalsha', 'evalsha']);
    } finally {
      await rest.close();
      await admin.quit();
    }
  });
});
