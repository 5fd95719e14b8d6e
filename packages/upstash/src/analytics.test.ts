import { describeWithService, redisService } from '@ratekit/test-utils';
import { Analytics } from './analytics.js';
import { MultiRegionRatelimit } from './multi-region.js';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, openClients, T0, uniquePrefix } from './test-support.js';

const HOUR = 3_600_000;

describe('analytics options', () => {
  it.each(['ioredis', 'node-redis'])('with a TCP client (%s), analytics: true throws RateKitOptionError naming `analytics`', (kind) => {
    const tcp = kind === 'ioredis' ? { defineCommand: () => undefined } : { evalSha: () => undefined };
    const limiter = Ratelimit.fixedWindow(1, '1 s');
    expect(() => new Ratelimit({ redis: tcp, limiter, analytics: true })).toThrow(expect.objectContaining({ name: 'RateKitOptionError', option: 'analytics' }));
    expect(() => new Ratelimit({ redis: tcp, limiter, analytics: false })).not.toThrow();
    expect(() => new Analytics({ redis: tcp })).toThrow(expect.objectContaining({ name: 'RateKitOptionError', option: 'redis' }));
  });
  it('extractGeo reads Vercel geo, else Cloudflare cf', () => {
    const analytics = new Analytics({ redis: {} });
    expect(analytics.extractGeo({ geo: { country: 'DE' }, cf: { country: 'FR' } })).toEqual({ country: 'DE' });
    expect(analytics.extractGeo({ cf: { city: 'Paris' } })).toEqual({ city: 'Paris' });
    expect(analytics.extractGeo({})).toEqual({});
  });
});

describeWithService(redisService, 'Analytics on a real Redis (through @upstash/redis)', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it('records events in hourly buckets under <prefix>:events:<bucket>, and reads usage back', async () => {
    const prefix = uniquePrefix('analytics');
    const now = T0 + 90 * 60_000; // 01:30 past T0's hour
    const analytics = new Analytics({ redis: clients.upstash, prefix, now: () => now });
    for (let i = 0; i < 3; i++) await analytics.record({ identifier: 'a', time: now, success: true });
    await analytics.record({ identifier: 'a', time: now - HOUR, success: false });
    await analytics.record({ identifier: 'b', time: now, success: 'denied', country: 'DE' });
    const bucket = Math.floor(now / HOUR) * HOUR;
    expect((await clients.nodeRedis.keys(`${prefix}:*`)).sort()).toEqual([`${prefix}:events:${bucket - HOUR}`, `${prefix}:events:${bucket}`]);
    expect(await clients.nodeRedis.zRangeWithScores(`${prefix}:events:${bucket}`, 0, -1)).toEqual([
      { value: '{"identifier":"b","success":"denied","country":"DE"}', score: 1 },
      { value: '{"identifier":"a","success":true}', score: 3 },
    ]);
    // core-analytics counts a truthy `success` ('denied' too) as success, as under the incumbent.
    expect(await analytics.getUsage(now - 2 * HOUR)).toEqual({ a: { success: 3, blocked: 1 }, b: { success: 1, blocked: 0 } });
    // From an hour back: the current bucket only.
    expect(await analytics.getUsage(now - HOUR)).toEqual({ a: { success: 3, blocked: 0 }, b: { success: 1, blocked: 0 } });
    const top = await analytics.getMostAllowedBlocked(2);
    expect(top.allowed).toEqual([{ identifier: 'a', count: 3 }]);
    expect(top.denied).toEqual([{ identifier: 'b', count: 1 }]);
    const overTime = await analytics.getUsageOverTime(2, 'identifier');
    expect(overTime.map((aggregate) => aggregate.time)).toEqual([bucket, bucket - HOUR]);
    expect(overTime[0]!.identifier).toEqual({ a: 3, b: 1 });
  });

  it('limit() with analytics counts each answer in `pending`: passed, rate limited, and deny-listed under the denied value', async () => {
    const prefix = uniquePrefix('analytics-limit');
    await clients.nodeRedis.set(`${prefix}:ipDenyListStatus`, 'disabled');
    await clients.nodeRedis.sAdd(`${prefix}:denyList:all`, `bad-ip-${prefix}`);
    const ratelimit = new Ratelimit({ redis: clients.upstash, limiter: Ratelimit.fixedWindow(1, '10 s'), prefix, analytics: true, enableProtection: true, now: () => T0, ephemeralCache: false });
    for (const req of [undefined, { geo: { country: 'DE' } }, { ip: `bad-ip-${prefix}` }]) await (await ratelimit.limit('u', req)).pending;
    const bucket = Math.floor(T0 / HOUR) * HOUR;
    expect((await clients.nodeRedis.zRangeWithScores(`${prefix}:events:${bucket}`, 0, -1)).map(({ value, score }) => [value, score]).sort()).toEqual([
      [`{"identifier":"bad-ip-${prefix}","success":"denied"}`, 1],
      ['{"identifier":"u","success":false,"country":"DE"}', 1],
      ['{"identifier":"u","success":true}', 1],
    ]);
  });

  it('a failed recording warns and leaves the answer alone', async () => {
    const prefix = uniquePrefix('analytics-wrongtype');
    const bucket = Math.floor(T0 / HOUR) * HOUR;
    await clients.nodeRedis.set(`${prefix}:events:${bucket}`, 'not a sorted set');
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const response = await new Ratelimit({ redis: clients.upstash, limiter: Ratelimit.fixedWindow(1, '10 s'), prefix, analytics: true, now: () => T0 }).limit('u');
      expect(response.success).toBe(true);
      await response.pending;
      expect(warn).toHaveBeenCalledWith('Failed to record analytics', expect.objectContaining({ message: expect.stringContaining('WRONGTYPE') }));
    } finally {
      warn.mockRestore();
    }
  });

  it('MultiRegionRatelimit with analytics counts in the first region only; it ignores enableProtection, as the incumbent', async () => {
    const prefix = uniquePrefix('analytics-multi');
    const second = await openClients(server().url);
    try {
      await clients.nodeRedis.sAdd(`${prefix}:denyList:all`, 'listed');
      const options = { redis: [clients.upstash, second.upstash], limiter: MultiRegionRatelimit.fixedWindow(5, '10 s'), prefix, analytics: true, now: () => T0, enableProtection: true };
      const ratelimit = new MultiRegionRatelimit(options);
      const response = await ratelimit.limit('listed');
      await response.pending;
      expect(response.success).toBe(true);
      expect(await clients.nodeRedis.exists(`${prefix}:ipDenyListStatus`)).toBe(0);
      const bucket = Math.floor(T0 / HOUR) * HOUR;
      expect(await clients.nodeRedis.zRangeWithScores(`${prefix}:events:${bucket}`, 0, -1)).toEqual([{ value: '{"identifier":"listed","success":true}', score: 1 }]);
      expect(clients.rest.commands.some((command) => String(command[0]).toLowerCase() === 'zincrby')).toBe(true);
      expect(second.rest.commands.some((command) => String(command[0]).toLowerCase() === 'zincrby')).toBe(false);
    } finally {
      await closeClients(second);
    }
  });
});
