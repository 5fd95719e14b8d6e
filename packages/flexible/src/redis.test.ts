import { RateKitError, RateKitOptionError } from '@ratekit/core';
import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient as createClient4 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterRedis } from './redis.js';
import { BATCH_SCRIPT_SHA } from './redis-scripts.js';

/**
 * RateLimiterRedis on a real Redis, through each client it supports: the data
 * it leaves is rate-limiter-flexible's (`prefix:key`, an integer string, a TTL
 * in whole seconds), its results come from Redis's PTTL, and its failures
 * are Errors. (The same keys shared with rlf itself: redis.fleet.test.ts.)
 */

let prefixes = 0;
/** A key prefix no other test uses. */
const freshPrefix = (name: string) => `rk-flex-test-${process.pid}-${++prefixes}-${name}`;

interface Connected {
  readonly client: object;
  close(): Promise<unknown>;
}

const CLIENTS: Record<string, (url: string) => Promise<Connected>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit() };
  },
  'node-redis 4': async (url) => {
    const client = await createClient4({ url }).connect();
    return { client, close: () => client.quit() };
  },
  // Recognised without useRedisPackage (rlf #314: rlf needed the flag for v5).
  'node-redis 5': async (url) => {
    const client = await createClient5({ url }).connect();
    return { client, close: () => client.quit() };
  },
};

describe('RateLimiterRedis options', () => {
  const fakeIoredis = { status: 'ready', evalsha: async () => null, eval: async () => null, defineCommand: () => {} };

  it('refuses useRedis3AndLowerPackage with a coded option error naming it', () => {
    const build = () => new RateLimiterRedis({ storeClient: fakeIoredis, points: 1, duration: 1, useRedis3AndLowerPackage: true });
    expect(build).toThrow(RateKitOptionError);
    expect(build).toThrow(/`useRedis3AndLowerPackage`/);
  });

  it('refuses a node-redis 3 client (callback commands) with the same coded error', () => {
    const redis3 = { send_command: () => true, evalsha: () => true, eval: () => true, connected: true };
    expect(() => new RateLimiterRedis({ storeClient: redis3, points: 1, duration: 1 })).toThrow(RateKitOptionError);
  });

  it.each([
    ['coalesce', 'yes'],
    ['maxBatchSize', 1],
    ['maxBatchSize', 2.5],
    ['batchesInFlight', -1],
    ['storeTimeoutMs', 0],
    ['storeTimeoutMs', 2 ** 31],
  ])('refuses %s = %p with a coded option error naming it', (option, value) => {
    const build = () => new RateLimiterRedis({ storeClient: fakeIoredis, points: 1, duration: 1, [option]: value });
    expect(build).toThrow(RateKitOptionError);
    expect(build).toThrow(new RegExp(`\`${option}\``));
  });

  it("keeps rlf's validation and messages", () => {
    expect(() => new RateLimiterRedis({ points: 1, duration: 1 } as never)).toThrow('storeClient is not set');
    expect(() => new RateLimiterRedis({ storeClient: fakeIoredis, points: 2, duration: 1, inMemoryBlockOnConsumed: 1 })).toThrow(
      'inMemoryBlockOnConsumed option must be greater or equal "points" option',
    );
  });

  it('rejects each call on a client that is not a Redis client it knows, with an Error saying so', async () => {
    const limiter = new RateLimiterRedis({ storeClient: { hello: 'world' }, points: 1, duration: 1 });
    await expect(limiter.consume('k')).rejects.toThrow(/storeClient is not a Redis client/);
    await expect(limiter.get('k')).rejects.toThrow(/storeClient is not a Redis client/);
  });

  it.each([
    ['ioredis', { status: 'connecting' }],
    ['node-redis 3', { isReady: () => false }],
    ['node-redis 4+', { isReady: false }],
    ['node-redis cluster (closed)', { isOpen: false, _slots: { getClient: () => undefined } }],
    ['node-redis cluster (node not ready)', { isOpen: true, _slots: { getClient: () => ({ isReady: false }) } }],
  ])('with rejectIfRedisNotReady, rejects at once on a %s client that is not ready', async (_, client) => {
    const limiter = new RateLimiterRedis({ storeClient: client, points: 1, duration: 1, rejectIfRedisNotReady: true });
    await expect(limiter.consume('k')).rejects.toThrow('Redis connection is not ready');
    await expect(limiter.get('k')).rejects.toThrow('Redis connection is not ready');
  });
});

describeWithService(redisService, 'RateLimiterRedis on Redis', (server) => {
  let admin: Redis;
  beforeAll(async () => {
    admin = new Redis(server().url);
  });
  afterAll(async () => {
    await admin.quit();
  });

  /** The key's value and TTL in seconds, as Redis has them. */
  const stored = async (key: string) => ({ value: await admin.get(key), ttl: await admin.ttl(key) });

  for (const [name, connect] of Object.entries(CLIENTS)) {
    describe(name, () => {
      let connected: Connected;
      beforeAll(async () => {
        connected = await connect(server().url);
      });
      afterAll(async () => {
        await connected.close();
      });
      const limiter = (options: Record<string, unknown>) => new RateLimiterRedis({ storeClient: connected.client, keyPrefix: freshPrefix('c'), points: 2, duration: 10, ...options });

      it("consume writes rlf's data: prefix:key, the count as an integer string, the window's TTL in whole seconds", async () => {
        const rl = limiter({});
        const first = await rl.consume('u');
        expect(first).toBeInstanceOf(RateLimiterRes);
        expect(first.toJSON()).toEqual({ remainingPoints: 1, msBeforeNext: expect.any(Number), consumedPoints: 1, isFirstInDuration: true });
        expect(first.msBeforeNext).toBeGreaterThan(9_000);
        expect(first.msBeforeNext).toBeLessThanOrEqual(10_000);
        expect(await stored(rl.getKey('u'))).toEqual({ value: '1', ttl: 10 });
        const second = await rl.consume('u');
        expect([second.consumedPoints, second.remainingPoints, second.isFirstInDuration]).toEqual([2, 0, false]);
        // The window is not extended by the second consume.
        expect(second.msBeforeNext).toBeLessThanOrEqual(first.msBeforeNext);
        const refused = await rl.consume('u').catch((rejection: unknown) => rejection);
        expect(refused).toBeInstanceOf(RateLimiterRes);
        expect((refused as RateLimiterRes).consumedPoints).toBe(3);
        expect((refused as RateLimiterRes).remainingPoints).toBe(0);
        // A refusal still counts, as in rlf.
        expect((await stored(rl.getKey('u'))).value).toBe('3');
      });

      it('penalty and reward add and take points without rejecting; reward may go below 0', async () => {
        const rl = limiter({ points: 1 });
        expect((await rl.penalty('p', 3)).consumedPoints).toBe(3);
        expect((await rl.reward('p', 5)).consumedPoints).toBe(-2);
        expect((await rl.get('p'))?.consumedPoints).toBe(-2);
        expect((await stored(rl.getKey('p'))).value).toBe('-2');
      });

      it('a duration of 0, or under one second, leaves no TTL; msBeforeNext is -1', async () => {
        for (const duration of [0, 0.5]) {
          const rl = limiter({ duration });
          const res = await rl.consume('z');
          expect([res.consumedPoints, res.msBeforeNext]).toEqual([1, -1]);
          expect(await stored(rl.getKey('z'))).toEqual({ value: '1', ttl: -1 });
        }
      });

      it('customDuration (seconds) gives a new window its own TTL', async () => {
        const rl = limiter({});
        const res = await rl.consume('d', 1, { customDuration: 3 });
        expect(res.msBeforeNext).toBeLessThanOrEqual(3_000);
        expect((await stored(rl.getKey('d'))).ttl).toBe(3);
      });

      it("a key without a TTL gets the window's on the next consume, reported as seconds × 1000 (rlf's fix-up)", async () => {
        const rl = limiter({ points: 10 });
        await admin.set(rl.getKey('f'), '4');
        const res = await rl.consume('f');
        expect([res.consumedPoints, res.msBeforeNext]).toEqual([5, 10_000]);
        expect((await stored(rl.getKey('f'))).ttl).toBe(10);
      });

      it('set and block write SET … EX (0 seconds: no TTL); get reads the count and PTTL; delete is DEL', async () => {
        const rl = limiter({});
        const set = await rl.set('s', 7, 20);
        expect(set.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 20_000, consumedPoints: 7, isFirstInDuration: false });
        expect(await stored(rl.getKey('s'))).toEqual({ value: '7', ttl: 20 });
        const got = await rl.get('s');
        expect(got?.consumedPoints).toBe(7);
        expect(got?.msBeforeNext).toBeGreaterThan(19_000);
        expect(got?.msBeforeNext).toBeLessThanOrEqual(20_000);

        const blocked = await rl.block('b', 0);
        expect(blocked.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: -1, consumedPoints: 3, isFirstInDuration: false });
        expect(await stored(rl.getKey('b'))).toEqual({ value: '3', ttl: -1 });
        expect((await rl.get('b'))?.msBeforeNext).toBe(-1);

        expect(await rl.get('missing')).toBeNull();
        expect(await rl.delete('s')).toBe(true);
        expect(await rl.delete('s')).toBe(false);
        expect(await admin.exists(rl.getKey('s'))).toBe(0);
      });

      it('blockDuration rewrites the key once, with the consumed count and a TTL of blockDuration', async () => {
        const rl = limiter({ points: 1, blockDuration: 30 });
        await rl.consume('x');
        const refused = (await rl.consume('x').catch((r: unknown) => r)) as RateLimiterRes;
        expect([refused.consumedPoints, refused.msBeforeNext]).toEqual([2, 30_000]);
        expect(await stored(rl.getKey('x'))).toEqual({ value: '2', ttl: 30 });
        // The next refusal does not block again: it reads the block's TTL.
        const again = (await rl.consume('x').catch((r: unknown) => r)) as RateLimiterRes;
        expect(again.consumedPoints).toBe(3);
        expect(again.msBeforeNext).toBeLessThanOrEqual(30_000);
      });

      it("rejects points that are not integers with rlf's messages, and writes nothing", async () => {
        const rl = limiter({});
        await expect(rl.consume('n', 1.5)).rejects.toThrow('Consuming decimal number of points is not supported by this package');
        await expect(rl.consume('n', '2.0' as never)).rejects.toThrow('Consuming string different than integer values is not supported by this package');
        expect(await admin.exists(rl.getKey('n'))).toBe(0);
        expect((await rl.consume('n', '2' as never)).consumedPoints).toBe(2);
      });

      it("runs customIncrTtlLuaScript with rlf's KEYS and ARGV: [key], [points, secDuration, limiter points, limiter duration]", async () => {
        const script = "redis.call('set', KEYS[1], ARGV[1] + ARGV[2] * 10, 'EX', ARGV[2]) return {tonumber(ARGV[3]) * 100 + tonumber(ARGV[4]), 1234}";
        const rl = limiter({ points: 7, duration: 9, customIncrTtlLuaScript: script });
        const res = await rl.penalty('c', 3);
        expect([res.consumedPoints, res.msBeforeNext]).toEqual([709, 1234]);
        expect(await stored(rl.getKey('c'))).toEqual({ value: '93', ttl: 9 });
      });

      it('a store failure rejects with an Error; with insuranceLimiter, the insurance answers', async () => {
        const broken = limiter({});
        await admin.hset(broken.getKey('h'), 'a', '1');
        const failure = await broken.consume('h').catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(Error);
        expect(failure).not.toBeInstanceOf(RateLimiterRes);

        const insurance = limiter({ points: 5 });
        const insured = limiter({ insuranceLimiter: insurance, keyPrefix: broken.keyPrefix });
        const res = await insured.consume('h');
        expect(res.consumedPoints).toBe(1);
        expect((await stored(insurance.getKey('h'))).value).toBe('1');
      });

      it('after SCRIPT FLUSH (a restart, a failover) it sends the script again with EVAL and carries on', async () => {
        const rl = limiter({ points: 5 });
        await rl.consume('r');
        await admin.script('FLUSH');
        expect(await admin.script('EXISTS', BATCH_SCRIPT_SHA)).toEqual([0]);
        expect((await rl.consume('r')).consumedPoints).toBe(2);
        expect(await admin.script('EXISTS', BATCH_SCRIPT_SHA)).toEqual([1]);
      });
    });
  }

  it('storeTimeoutMs: a call Redis does not answer in time rejects with a RateKitError (ERR_RATEKIT_STORE), and the insurance answers', async () => {
    // A client whose script call never settles (the server is fine: the client stalls).
    const ioredis = new Redis(server().url);
    try {
      const stalled = new Proxy(ioredis, {
        get: (target, property, receiver) => (property === 'evalsha' ? () => new Promise(() => {}) : Reflect.get(target, property, receiver)),
      });
      const rl = new RateLimiterRedis({ storeClient: stalled, keyPrefix: freshPrefix('t'), points: 2, duration: 10, storeTimeoutMs: 100 });
      const started = performance.now();
      const failure = await rl.consume('k').catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(failure).toBeInstanceOf(RateKitError);
      expect((failure as RateKitError).code).toBe('ERR_RATEKIT_STORE');
      // At the timeout, with 1 s for timers on a busy machine.
      expect(elapsed).toBeGreaterThanOrEqual(99);
      expect(elapsed).toBeLessThan(1_100);

      const insurance = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('ti'), points: 5, duration: 10 });
      const insured = new RateLimiterRedis({ storeClient: stalled, keyPrefix: insurance.keyPrefix, points: 2, duration: 10, storeTimeoutMs: 100, insuranceLimiter: insurance });
      expect((await insured.consume('k')).consumedPoints).toBe(1);
    } finally {
      await ioredis.quit();
    }
  });
});
