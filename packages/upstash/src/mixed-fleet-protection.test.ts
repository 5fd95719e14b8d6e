// A fleet mid-migration with deny lists and analytics: @upstash/ratelimit 2.2.0 and @ratekit/upstash
// on one prefix (through @upstash/redis and a local Upstash REST endpoint on the real Redis, and ours
// over TCP too). Whatever one library writes (the IP list, its status, the user's deny list, analytics
// events), the other reads and answers as a fleet of incumbents alone would; and each leaves the same
// keys, values and TTLs. The IP feed is served from memory (no internet).
import { describeWithService, redisService, startUpstashRestServer, type UpstashRestServer } from '@ratekit/test-utils';
import { Analytics as IncumbentAnalytics, IpDenyList as IncumbentIpDenyList, Ratelimit as Incumbent } from '@upstash/ratelimit';
import { Redis as Upstash } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { Analytics } from './analytics.js';
import { denyListKeys } from './deny-list-keys.js';
import { forgetDeniedValues } from './deny-list.js';
import { IpDenyList } from './index.js';
import { feedOf, mockIpFeed, type IpFeedMock } from './ip-feed-mock.js';
import { Ratelimit } from './ratelimit.js';
import { FixedClock, T0, uniquePrefix } from './test-support.js';

describeWithService(redisService, 'a mixed fleet with deny lists and analytics: @upstash/ratelimit 2.2.0 and @ratekit/upstash', (server) => {
  let admin: ReturnType<typeof createClient>;
  let rest: UpstashRestServer;
  let upstash: Upstash;
  let tcp: IORedis;
  let feed: IpFeedMock;
  let nowSpy: jest.SpiedFunction<typeof Date.now>;
  const clock = new FixedClock(T0);

  beforeAll(async () => {
    admin = createClient({ url: server().url });
    await admin.connect();
    // With MULTI: the incumbent's IpDenyList writes in a transaction.
    rest = await startUpstashRestServer({
      sendCommand: (args) => admin.sendCommand(args),
      multi: (commands) => {
        const multi = admin.multi();
        for (const command of commands) multi.addCommand(command);
        return multi.exec();
      },
    });
    upstash = new Upstash({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false });
    tcp = new IORedis(server().url);
  });
  afterAll(async () => {
    await rest.close();
    await admin.quit();
    await tcp.quit();
  });
  beforeEach(() => {
    clock.ms = T0;
    nowSpy = jest.spyOn(Date, 'now').mockImplementation(() => clock.ms);
    feed = mockIpFeed({ 6: feedOf(6), 8: feedOf(3, 40) });
    forgetDeniedValues();
  });
  afterEach(() => {
    feed.restore();
    nowSpy.mockRestore();
  });

  const limiterOptions = (prefix: string) => ({ limiter: Ratelimit.fixedWindow(5, '10 s'), prefix, enableProtection: true, ephemeralCache: false as const });
  const incumbent = (prefix: string, extra: { analytics?: boolean } = {}) =>
    new Incumbent({ redis: upstash, limiter: Incumbent.fixedWindow(5, '10 s'), prefix, enableProtection: true, ephemeralCache: false, enableTelemetry: false, ...extra });
  const ours = (prefix: string, overTcp = false, extra: { analytics?: boolean } = {}) => new Ratelimit({ redis: overTcp ? tcp : upstash, ...limiterOptions(prefix), now: clock.now, ...extra });

  /** Every key under `prefix` (its own part), with its value (sets sorted) and TTL, ms. */
  async function dataOf(prefix: string) {
    const data: Record<string, { value: unknown; ttl: number }> = {};
    for (const key of await admin.keys(`${prefix}:*`)) {
      const type = await admin.type(key);
      const value = type === 'set' ? (await admin.sMembers(key)).sort() : type === 'zset' ? await admin.zRangeWithScores(key, 0, -1) : await admin.get(key);
      data[key.slice(prefix.length)] = { value, ttl: await admin.pTTL(key) };
    }
    return data;
  }
  const sameTtl = (a: number, b: number) => (a < 0 || b < 0 ? a === b : Math.abs(a - b) < 5_000);
  function expectSameData(actual: Record<string, { value: unknown; ttl: number }>, reference: Record<string, { value: unknown; ttl: number }>) {
    expect(Object.keys(actual).sort()).toEqual(Object.keys(reference).sort());
    for (const [key, { value, ttl }] of Object.entries(reference)) {
      expect([key, actual[key]!.value]).toEqual([key, value]);
      expect([key, sameTtl(actual[key]!.ttl, ttl)]).toEqual([key, true]);
    }
  }

  it.each([false, true])('the IP list loaded by limit(): the same keys, sets, status and TTL as the incumbent leaves (ours over TCP: %p)', async (overTcp) => {
    const [theirs, mine] = [uniquePrefix('fleet-ip-incumbent'), uniquePrefix('fleet-ip-ours')];
    for (const prefix of [theirs, mine]) await admin.sAdd(denyListKeys(prefix).all, ['own', '203.0.113.3']);
    const a = await incumbent(theirs).limit('u');
    await a.pending;
    const b = await ours(mine, overTcp).limit('u');
    await b.pending;
    expect([a.success, a.remaining]).toEqual([b.success, b.remaining]);
    expect(feed.requested).toHaveLength(2);
    const reference = await dataOf(theirs);
    expect(reference[':ipDenyListStatus']!.value).toBe('valid');
    expect((reference[':denyList:ipDenyList']!.value as string[]).length).toBe(5);
    expectSameData(await dataOf(mine), reference);
  });

  it("one library's claim on the refresh (`pending`, 30 s) stops the other's download; the list it loads, the other refuses", async () => {
    const prefix = uniquePrefix('fleet-ip-claim');
    feed.hold();
    const first = await incumbent(prefix).limit('u1');
    expect(await admin.get(denyListKeys(prefix).status)).toBe('pending');
    const second = await ours(prefix).limit('u2');
    feed.release();
    await Promise.all([first.pending, second.pending]);
    expect(feed.requested).toHaveLength(1);
    const ip = '203.0.113.5';
    expect(await ours(prefix).limit('u3', { ip })).toMatchObject({ success: false, remaining: 0, reason: 'denyList', deniedValue: ip });
    // And the other way round on a fresh prefix: ours claims, the incumbent waits, and refuses what ours loaded.
    const other = uniquePrefix('fleet-ip-claim-ours');
    feed.hold();
    const mine = await ours(other, true).limit('u1');
    const theirs = await incumbent(other).limit('u2');
    feed.release();
    await Promise.all([mine.pending, theirs.pending]);
    expect(feed.requested).toHaveLength(2);
    expect(await incumbent(other).limit('u3', { ip: '203.0.113.4' })).toMatchObject({ success: false, reason: 'denyList', deniedValue: '203.0.113.4' });
  });

  it('IpDenyList: update and disable by either library give the same data, and both limiters follow it', async () => {
    const [theirs, mine] = [uniquePrefix('fleet-ipl-incumbent'), uniquePrefix('fleet-ipl-ours')];
    for (const prefix of [theirs, mine]) await admin.sAdd(denyListKeys(prefix).all, 'own');
    const theirReplies = await IncumbentIpDenyList.updateIpDenyList(upstash, theirs, 8);
    const myReplies = await IpDenyList.updateIpDenyList(tcp, mine, 8);
    expect(myReplies).toEqual(theirReplies);
    expectSameData(await dataOf(mine), await dataOf(theirs));
    // Ours refuses an IP the incumbent loaded; the incumbent one ours loaded.
    expect(await ours(theirs).limit('u', { ip: '203.0.113.40' })).toMatchObject({ reason: 'denyList', deniedValue: '203.0.113.40' });
    expect(await incumbent(mine).limit('u', { ip: '203.0.113.41' })).toMatchObject({ reason: 'denyList', deniedValue: '203.0.113.41' });
    // Disable, crosswise: the same data again, and neither limiter downloads or refuses the other IP now.
    expect(await IpDenyList.disableIpDenyList(upstash, theirs)).toEqual(await IncumbentIpDenyList.disableIpDenyList(upstash, mine));
    expectSameData(await dataOf(mine), await dataOf(theirs));
    expect(await ours(mine).limit('u', { ip: '203.0.113.42' })).toMatchObject({ success: true });
    expect(await incumbent(theirs).limit('u', { ip: '203.0.113.42' })).toMatchObject({ success: true });
    expect(feed.requested).toHaveLength(2);
  });

  it('a deny-listed identifier, ip, user agent or country: the same answers from either library', async () => {
    const prefix = uniquePrefix('fleet-deny-answers');
    await admin.set(denyListKeys(prefix).status, 'disabled');
    await admin.sAdd(denyListKeys(prefix).all, ['bad-id', 'bad-ip', 'bad-agent', 'bad-country']);
    const requests: Array<[string, { ip?: string; userAgent?: string; country?: string } | undefined]> = [
      ['good', undefined],
      ['bad-id', undefined],
      ['good', { ip: 'bad-ip' }],
      ['good', { userAgent: 'bad-agent' }],
      ['bad-id', { country: 'bad-country' }],
    ];
    const answers = async (limiter: { limit: Incumbent['limit'] | Ratelimit['limit'] }) => {
      const seen = [];
      for (const [identifier, req] of requests) {
        const { success, remaining, reason, deniedValue } = await limiter.limit(identifier, req);
        seen.push({ success, remaining, reason, deniedValue });
      }
      return seen;
    };
    // Each library on a fresh window (the counts are shared) and a fresh process-wide cache of denied values.
    const reference = await answers(incumbent(prefix));
    clock.ms = T0 + 10_000;
    forgetDeniedValues();
    expect(await answers(ours(prefix))).toEqual(reference);
    expect(reference.filter((answer) => answer.reason === 'denyList')).toHaveLength(4);
  });

  it("analytics: the same events, in the same buckets, as a fleet of incumbents; each library's Analytics reads the other's", async () => {
    const [reference, mixed] = [uniquePrefix('fleet-analytics-incumbents'), uniquePrefix('fleet-analytics-mixed')];
    for (const prefix of [reference, mixed]) {
      await admin.set(denyListKeys(prefix).status, 'disabled');
      await admin.sAdd(denyListKeys(prefix).all, 'denied-ip');
    }
    const schedule: Array<[string, { geo?: { country: string }; ip?: string } | undefined]> = [
      ['a', undefined],
      ['a', { geo: { country: 'DE' } }],
      ['b', undefined],
      ['a', undefined],
      ['a', undefined],
      ['a', undefined],
      ['a', { geo: { country: 'DE' } }],
      // Ours answers this one in the mixed fleet (the incumbent's own cache of denied values cannot be cleared).
      ['c', { ip: 'denied-ip' }],
    ];
    async function run(fleet: Array<{ limit: Incumbent['limit'] | Ratelimit['limit'] }>) {
      for (const [i, [identifier, req]] of schedule.entries()) {
        clock.ms = T0 + i;
        forgetDeniedValues();
        await (
          await fleet[i % fleet.length]!.limit(identifier, req)
        ).pending;
      }
    }
    await run([incumbent(reference, { analytics: true }), incumbent(reference, { analytics: true })]);
    await run([incumbent(mixed, { analytics: true }), ours(mixed, false, { analytics: true })]);
    const referenceData = await dataOf(reference);
    expect(Object.keys(referenceData).some((key) => key.startsWith(':events:'))).toBe(true);
    expectSameData(await dataOf(mixed), referenceData);
    const usage = await new IncumbentAnalytics({ redis: upstash, prefix: mixed }).getUsage(T0 - 3_600_000);
    expect(usage).toEqual(await new Analytics({ redis: upstash, prefix: mixed, now: clock.now }).getUsage(T0 - 3_600_000));
    // (core-analytics keeps, per identifier and outcome, the count of one event shape, not the sum: under both libraries.)
    expect(Object.keys(usage).sort()).toEqual(['a', 'b', 'denied-ip']);
    expect(usage.a!.blocked).toBe(1);
  });
});
