import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient as createClient5 } from 'redis5';
import type { AllOrNothingEntry, AllOrNothingParticipant } from './all-or-nothing.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterRedis } from './redis.js';
import { allOrNothingAnswer, allOrNothingArguments, CROSS_SLOT_CODE, crossSlotError } from './redis-all-or-nothing.js';
import type { RedisTransport } from './redis-client.js';
import { RateLimiterUnion } from './union.js';

const participant = {} as AllOrNothingParticipant;
const entry = (rlKey: string, points: number, msDuration: number, limitPoints: number): AllOrNothingEntry => ({ limiter: participant, rlKey, points, msDuration, limitPoints });

describe('the all-or-nothing script call', () => {
  it("sends the entry count, then each entry's points, whole seconds of its window and limit", () => {
    expect(allOrNothingArguments([entry('a:k', 1, 1_000, 5), entry('b:k', 2, 60_500, 100), entry('c:k', 1, 0, 3)])).toEqual(['3', '1', '1', '5', '2', '60', '100', '1', '0', '3']);
  });

  it('reads the reply; a key the refusal did not create reports the window it would have started (-1 without a TTL)', () => {
    const entries = [entry('a:k', 1, 5_000, 1), entry('b:k', 1, 500, 9), entry('c:k', 1, 5_000, 9)];
    expect(allOrNothingAnswer(entries, [0, 2, 3_000, 1, -2, 1, -1])).toEqual({
      admitted: false,
      outcomes: [
        { consumedPoints: 2, msBeforeNext: 3_000 },
        { consumedPoints: 1, msBeforeNext: -1 },
        { consumedPoints: 1, msBeforeNext: -1 },
      ],
    });
    expect(allOrNothingAnswer([entry('a:k', 1, 5_000, 1)], [0, 1, -2]).outcomes[0]).toEqual({ consumedPoints: 1, msBeforeNext: 5_000 });
    expect(() => allOrNothingAnswer(entries, [1, 2])).toThrow(/unexpected reply/);
  });

  it('on a cluster, refuses keys of different hash slots with a coded error that says how to fix it', () => {
    const cluster = { slotOf: (key: string) => (key.includes('{u1}') ? 7 : key.length) } as unknown as RedisTransport;
    expect(crossSlotError(cluster, ['a:{u1}', 'bb:{u1}'])).toBeUndefined();
    const error = crossSlotError(cluster, ['a:x', 'bb:x']);
    expect(error?.code).toBe(CROSS_SLOT_CODE);
    expect(error?.message).toMatch(/one hash slot.*hash tag/);
    expect(crossSlotError({ slotOf: undefined } as unknown as RedisTransport, ['a:x', 'bb:x'])).toBeUndefined();
  });
});

let prefixes = 0;
const freshPrefix = (name: string) => `rk-flex-aon-${process.pid}-${++prefixes}-${name}`;

describeWithService(redisService, 'an all-or-nothing RateLimiterUnion of RateLimiterRedis limiters', (server) => {
  let admin: Redis;
  let ioredis: Redis;
  beforeAll(async () => {
    admin = new Redis(server().url);
    ioredis = new Redis(server().url);
  });
  afterAll(async () => {
    await Promise.all([admin.quit(), ioredis.quit()]);
  });

  const stored = async (key: string) => ({ value: await admin.get(key), ttl: await admin.ttl(key) });

  it("admitted: charges every limiter's key exactly as a lone consume would, in rlf's layout", async () => {
    const perSecond = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('s'), points: 2, duration: 1 });
    const perMinute = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('m'), points: 5, duration: 60 });
    const union = new RateLimiterUnion(perSecond, perMinute, { allOrNothing: true });
    const result = await union.consume('u');
    expect(Object.keys(result).sort()).toEqual([perMinute.keyPrefix, perSecond.keyPrefix].sort());
    expect(result[perMinute.keyPrefix]).toBeInstanceOf(RateLimiterRes);
    expect(result[perMinute.keyPrefix]!.toJSON()).toEqual({ remainingPoints: 4, msBeforeNext: 60_000, consumedPoints: 1, isFirstInDuration: true });
    expect(await stored(perSecond.getKey('u'))).toEqual({ value: '1', ttl: 1 });
    expect(await stored(perMinute.getKey('u'))).toEqual({ value: '1', ttl: 60 });
    // A lone consume sees the union's charge.
    expect((await perMinute.consume('u')).consumedPoints).toBe(2);
  });

  it('refused: charges nothing, and rejects with the refusing limiters only', async () => {
    const tight = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('t'), points: 1, duration: 30 });
    const loose = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('l'), points: 10, duration: 30 });
    const union = new RateLimiterUnion(tight, loose, { allOrNothing: true });
    await union.consume('u');
    const rejection = (await union.consume('u').catch((r: unknown) => r)) as Record<string, RateLimiterRes>;
    expect(Object.keys(rejection)).toEqual([tight.keyPrefix]);
    expect(rejection[tight.keyPrefix]!.consumedPoints).toBe(2);
    expect(rejection[tight.keyPrefix]!.remainingPoints).toBe(0);
    expect(rejection[tight.keyPrefix]!.msBeforeNext).toBeLessThanOrEqual(30_000);
    // rlf's union would have charged `loose` a second time (rlf #280); this one did not.
    expect((await stored(tight.getKey('u'))).value).toBe('1');
    expect((await stored(loose.getKey('u'))).value).toBe('1');
  });

  it('a refusal on keys that do not exist yet creates none of them', async () => {
    const zero = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('z'), points: 0, duration: 30 });
    const other = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('o'), points: 5, duration: 30 });
    const rejection = (await new RateLimiterUnion(zero, other, { allOrNothing: true }).consume('new').catch((r: unknown) => r)) as Record<string, RateLimiterRes>;
    expect(rejection[zero.keyPrefix]!.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 30_000, consumedPoints: 1, isFirstInDuration: true });
    expect(await admin.exists(zero.getKey('new'), other.getKey('new'))).toBe(0);
  });

  it('under concurrency never admits past any limit, and every admitted request is charged to every key', async () => {
    const client = await createClient5({ url: server().url }).connect();
    try {
      const a = new RateLimiterRedis({ storeClient: client, keyPrefix: freshPrefix('a'), points: 7, duration: 60 });
      const b = new RateLimiterRedis({ storeClient: client, keyPrefix: freshPrefix('b'), points: 12, duration: 60 });
      const union = new RateLimiterUnion(a, b, { allOrNothing: true });
      const settled = await Promise.allSettled(Array.from({ length: 30 }, () => union.consume('hot')));
      const admitted = settled.filter((s) => s.status === 'fulfilled').length;
      expect(admitted).toBe(7);
      expect((await stored(a.getKey('hot'))).value).toBe('7');
      expect((await stored(b.getKey('hot'))).value).toBe('7');
    } finally {
      await client.quit();
    }
  });

  it("a store failure rejects with an Error under every limiter's prefix", async () => {
    const a = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('fa'), points: 5, duration: 60 });
    const b = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('fb'), points: 5, duration: 60 });
    await admin.hset(b.getKey('k'), 'f', '1');
    const rejection = (await new RateLimiterUnion(a, b, { allOrNothing: true }).consume('k').catch((r: unknown) => r)) as Record<string, unknown>;
    expect(rejection[a.keyPrefix]).toBeInstanceOf(Error);
    expect(rejection[b.keyPrefix]).toBeInstanceOf(Error);
    expect(await admin.exists(a.getKey('k'))).toBe(0);
  });

  it('a limiter with customIncrTtlLuaScript cannot take part: the call rejects and charges nothing', async () => {
    const custom = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('c'), points: 5, duration: 60, customIncrTtlLuaScript: 'return {1, 1}' });
    const plain = new RateLimiterRedis({ storeClient: ioredis, keyPrefix: freshPrefix('p'), points: 5, duration: 60 });
    const rejection = (await new RateLimiterUnion(plain, custom, { allOrNothing: true }).consume('k').catch((r: unknown) => r)) as Record<string, Error>;
    expect(rejection[plain.keyPrefix]?.message).toMatch(/customIncrTtlLuaScript/);
    expect(await admin.exists(plain.getKey('k'), custom.getKey('k'))).toBe(0);
  });
});
