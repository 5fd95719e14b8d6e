// MultiRegionRatelimit against @upstash/ratelimit 2.2.0's: two regions (databases 1 and 2 of the real
// Redis, each behind its own local Upstash REST endpoint), fleets taking turns on one identifier on a
// fixed clock, `pending` awaited after each request. A fleet of ours, and a fleet mixing both, must
// answer as a fleet of incumbents and leave the same data in every region (request ids are random:
// compared are each hash's field count, its sum and its TTL).
import { describeWithService, redisService, startUpstashRestServer, type UpstashRestServer } from '@ratekit/test-utils';
import { MultiRegionRatelimit as Incumbent } from '@upstash/ratelimit';
import { Redis as Upstash } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { MultiRegionRatelimit } from './multi-region.js';
import { FixedClock, T0, uniquePrefix } from './test-support.js';

type Algorithm = 'fixedWindow' | 'slidingWindow';
type Step = { at: number; rate?: number };
type Member = (step: Step) => Promise<{ success: boolean; remaining: number; limit: number; pending: Promise<unknown> }>;

const DATABASES = [1, 2];
const connectRegion = (url: string, database: number) => createClient({ url, database });
const SCHEDULES: Record<Algorithm, Step[]> = {
  fixedWindow: [{ at: 0 }, { at: 1 }, { at: 2 }, { at: 3, rate: 2 }, { at: 4 }, { at: 10_000 }, { at: 10_001, rate: 3 }, { at: 12_000, rate: -1 }, { at: 13_000 }, { at: 14_000 }],
  slidingWindow: [{ at: 0 }, { at: 1 }, { at: 2 }, { at: 3 }, { at: 4 }, { at: 10_000 }, { at: 12_500 }, { at: 15_000, rate: 2 }, { at: 17_500 }, { at: 19_999 }, { at: 25_000 }],
};

describeWithService(redisService, 'MultiRegionRatelimit, two regions, against @upstash/ratelimit 2.2.0', (server) => {
  const admins: Array<ReturnType<typeof connectRegion>> = [];
  const rests: UpstashRestServer[] = [];
  const upstash: Upstash[] = [];
  const tcp: IORedis[] = [];
  let nowSpy: jest.SpiedFunction<typeof Date.now>;
  const clock = new FixedClock(T0);

  beforeAll(async () => {
    // Each endpoint accepts the incumbent's `#!lua flags=allow-key-locking` scripts (an Upstash flag
    // Redis 7.0 refuses) as Upstash does: see @ratekit/test-utils's upstash-rest-server.ts.
    for (const database of DATABASES) {
      const admin = connectRegion(server().url, database);
      await admin.connect();
      const rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
      admins.push(admin);
      rests.push(rest);
      upstash.push(new Upstash({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false }));
      tcp.push(new IORedis(server().url, { db: database }));
    }
  });
  afterAll(async () => {
    for (const rest of rests) await rest.close();
    for (const admin of admins) await admin.quit();
    for (const client of tcp) await client.quit();
  });
  beforeEach(() => {
    nowSpy = jest.spyOn(Date, 'now').mockImplementation(() => clock.ms);
  });
  afterEach(() => nowSpy.mockRestore());

  function member(kind: 'incumbent' | 'ours' | 'ours-tcp', algorithm: Algorithm, prefix: string): Member {
    const limiter =
      kind === 'incumbent'
        ? new Incumbent({ redis: upstash, limiter: Incumbent[algorithm](4, '10 s'), prefix, enableTelemetry: false })
        : new MultiRegionRatelimit({ redis: kind === 'ours' ? upstash : tcp, limiter: MultiRegionRatelimit[algorithm](4, '10 s'), prefix, now: clock.now });
    return (step) => {
      clock.ms = T0 + step.at;
      return limiter.limit('u', step.rate === undefined ? undefined : { rate: step.rate });
    };
  }

  async function run(fleet: Member[], prefix: string, schedule: Step[]) {
    const answers: Array<[boolean, number, number]> = [];
    for (const [i, step] of schedule.entries()) {
      const response = await fleet[i % fleet.length]!(step);
      await response.pending;
      answers.push([response.success, response.remaining, response.limit]);
    }
    const regions: Array<Record<string, { fields: number; sum: number; ttl: number }>> = [];
    for (const admin of admins) {
      const data: Record<string, { fields: number; sum: number; ttl: number }> = {};
      for (const key of await admin.keys(`${prefix}:*`)) {
        const hash = await admin.hGetAll(key);
        data[key.slice(prefix.length)] = { fields: Object.keys(hash).length, sum: Object.values(hash).reduce((a, b) => a + Number(b), 0), ttl: await admin.pTTL(key) };
        await admin.del(key);
      }
      regions.push(data);
    }
    return { answers, regions };
  }

  it.each(['fixedWindow', 'slidingWindow'] as const)('%s: ours alone, ours over TCP, and ours mixed with the incumbent answer and write as incumbents alone', async (algorithm) => {
    const schedule = SCHEDULES[algorithm];
    const prefixes = ['incumbents', 'ours', 'ours-tcp', 'mixed'].map((label) => uniquePrefix(`multi-${algorithm}-${label}`));
    // Two instances take turns in every fleet (each instance has its own ephemeral cache).
    const reference = await run([member('incumbent', algorithm, prefixes[0]!), member('incumbent', algorithm, prefixes[0]!)], prefixes[0]!, schedule);
    const fleets = [
      await run([member('ours', algorithm, prefixes[1]!), member('ours', algorithm, prefixes[1]!)], prefixes[1]!, schedule),
      await run([member('ours-tcp', algorithm, prefixes[2]!), member('ours', algorithm, prefixes[2]!)], prefixes[2]!, schedule),
      await run([member('incumbent', algorithm, prefixes[3]!), member('ours', algorithm, prefixes[3]!)], prefixes[3]!, schedule),
    ];
    expect(reference.answers.some(([success]) => !success)).toBe(true);
    expect(Object.keys(reference.regions[1]!).length).toBeGreaterThan(0);
    for (const fleet of fleets) {
      expect(fleet.answers).toEqual(reference.answers);
      for (const [r, region] of reference.regions.entries()) {
        expect(Object.keys(fleet.regions[r]!).sort()).toEqual(Object.keys(region).sort());
        for (const [key, { fields, sum, ttl }] of Object.entries(region)) {
          const ours = fleet.regions[r]![key]!;
          expect([key, ours.fields, ours.sum]).toEqual([key, fields, sum]);
          expect([key, ours.ttl < 0 ? ours.ttl === ttl : Math.abs(ours.ttl - ttl) < 2_000]).toEqual([key, true]);
        }
      }
    }
  });

  it('a region that missed a request gets it in pending', async () => {
    const prefix = uniquePrefix('multi-sync');
    const key = `${prefix}:u:${T0 / 10_000}`;
    // Region 2 holds a request region 1 never saw (a region unreachable then, say).
    await admins[1]!.hSet(key, 'earlier-request-id', '1');
    const ratelimit = new MultiRegionRatelimit({ redis: upstash, limiter: MultiRegionRatelimit.fixedWindow(4, '10 s'), prefix, now: clock.now });
    clock.ms = T0;
    const response = await ratelimit.limit('u');
    await response.pending;
    const hashes = await Promise.all(admins.map((admin) => admin.hGetAll(key)));
    expect(Object.keys(hashes[0]!).sort()).toEqual(Object.keys(hashes[1]!).sort());
    expect(Object.keys(hashes[0]!)).toHaveLength(2);
    expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 2, limit: 4 });
    await ratelimit.resetUsedTokens('u');
    expect(await Promise.all(admins.map((admin) => admin.exists(key)))).toEqual([0, 0]);
  });

  it('getRemaining, the ephemeral cache, and the incumbent warning for dynamicLimits', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const cache = new Map<string, number>();
    const ratelimit = new MultiRegionRatelimit({
      redis: upstash,
      limiter: MultiRegionRatelimit.slidingWindow(2, '10 s'),
      prefix: uniquePrefix('multi-cache'),
      ephemeralCache: cache,
      dynamicLimits: true,
      now: clock.now,
    });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('not yet supported for multi-region'));
    warn.mockRestore();
    clock.ms = T0;
    for (let i = 0; i < 3; i++) await (await ratelimit.limit('u')).pending;
    expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 0, limit: 2, reset: T0 + 10_000 });
    expect(await ratelimit.limit('u')).toMatchObject({ success: false, reason: 'cacheBlock' });
    await ratelimit.resetUsedTokens('u');
    expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 2 });
  });
});
