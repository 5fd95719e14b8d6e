import { describeWithService, redisService } from '@ratekit/test-utils';
import { denyListKeys } from './deny-list-keys.js';
import { forgetDeniedValues } from './deny-list.js';
import { ipDenyListTtlMs } from './ip-deny-list-feed.js';
import { feedOf, mockIpFeed, type IpFeedMock } from './ip-feed-mock.js';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, FixedClock, openClients, T0, uniquePrefix } from './test-support.js';

describe('enableProtection options', () => {
  const limiter = Ratelimit.fixedWindow(1, '1 s');
  it.each([0, 9, 2.5, Number.NaN, '6' as unknown as number])('denyListThreshold %p throws at construction, naming the option', (threshold) => {
    expect(() => new Ratelimit({ redis: {}, limiter, enableProtection: true, denyListThreshold: threshold })).toThrow(/`denyListThreshold` to be an integer from 1 to 8/);
  });
  it('accepts thresholds 1 to 8, and ignores the threshold without enableProtection (as the incumbent)', () => {
    for (let threshold = 1; threshold <= 8; threshold++) expect(() => new Ratelimit({ redis: {}, limiter, enableProtection: true, denyListThreshold: threshold })).not.toThrow();
    expect(() => new Ratelimit({ redis: {}, limiter, denyListThreshold: 99 })).not.toThrow();
  });
});

describeWithService(redisService, 'deny lists (enableProtection) on a real Redis', (server) => {
  let clients: Clients;
  let feed: IpFeedMock;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));
  beforeEach(() => {
    forgetDeniedValues();
    feed = mockIpFeed({ 6: feedOf(5), 8: feedOf(2, 100) });
  });
  afterEach(() => feed.restore());

  /** A prefix whose IP list is `disabled` (so no download starts), with `denied` in its deny list. */
  async function disabledPrefix(label: string, ...denied: string[]): Promise<string> {
    const prefix = uniquePrefix(label);
    const keys = denyListKeys(prefix);
    await clients.nodeRedis.set(keys.status, 'disabled');
    if (denied.length > 0) await clients.nodeRedis.sAdd(keys.all, denied);
    return prefix;
  }

  describe.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', (kind) => {
    it('refuses a listed identifier with reason denyList, still counting the request; then from the cache for a minute, without Redis', async () => {
      const clock = new FixedClock(T0);
      const prefix = await disabledPrefix('deny-identifier', 'bad-user');
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix, enableProtection: true, now: clock.now, ephemeralCache: false });
      expect(await ratelimit.limit('bad-user')).toMatchObject({ success: false, limit: 5, remaining: 0, reset: T0 + 10_000, reason: 'denyList', deniedValue: 'bad-user' });
      // The algorithm ran beside the check, as in the incumbent: the request was counted.
      expect(await clients.nodeRedis.get(`${prefix}:bad-user:${Math.floor(T0 / 10_000)}`)).toBe('1');
      const commandsBefore = clients.rest.commands.length;
      const fromCache = await ratelimit.limit('bad-user');
      expect(fromCache).toEqual({ success: false, limit: 0, remaining: 0, reset: 0, pending: expect.any(Promise), reason: 'denyList', deniedValue: 'bad-user' });
      expect(clients.rest.commands.length).toBe(commandsBefore);
      expect(await clients.nodeRedis.get(`${prefix}:bad-user:${Math.floor(T0 / 10_000)}`)).toBe('1');
      // A minute later Redis is asked again (the value is still listed).
      clock.ms = T0 + 60_001;
      expect(await ratelimit.limit('bad-user')).toMatchObject({ limit: 5, reason: 'denyList' });
    });

    it.each([
      ['ip', { ip: 'ip-1' }, 'ip-1'],
      ['userAgent', { userAgent: 'agent-1' }, 'agent-1'],
      ['country', { country: 'country-1' }, 'country-1'],
    ])('refuses a listed %s', async (_, req, value) => {
      const prefix = await disabledPrefix('deny-field', `${value}-${kind}`);
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.tokenBucket(1, '1 s', 10), prefix, enableProtection: true });
      const listed = Object.fromEntries(Object.entries(req).map(([field, v]) => [field, `${v}-${kind}`]));
      expect(await ratelimit.limit('someone', listed)).toMatchObject({ success: false, remaining: 0, reason: 'denyList', deniedValue: `${value}-${kind}` });
      expect(await ratelimit.limit('someone', { ip: 'not-listed', userAgent: 'fine', country: 'XX' })).toMatchObject({ success: true, remaining: 8 });
    });

    it('with several listed values, answers the last of identifier, ip, userAgent, country (as the incumbent) and caches each', async () => {
      const prefix = await disabledPrefix('deny-several', `u-${kind}`, `c-${kind}`);
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.slidingWindow(5, '10 s'), prefix, enableProtection: true });
      expect(await ratelimit.limit(`u-${kind}`, { ip: 'fine', country: `c-${kind}` })).toMatchObject({ success: false, reason: 'denyList', deniedValue: `c-${kind}` });
      // Each listed value is now refused from the cache: the first of the request's values that is cached.
      expect(await ratelimit.limit('other', { country: `c-${kind}` })).toMatchObject({ limit: 0, reason: 'denyList', deniedValue: `c-${kind}` });
      expect(await ratelimit.limit(`u-${kind}`)).toMatchObject({ limit: 0, reason: 'denyList', deniedValue: `u-${kind}` });
    });

    it('without enableProtection, a listed identifier passes and no deny-list key is read or written', async () => {
      const prefix = uniquePrefix('deny-off');
      await clients.nodeRedis.sAdd(denyListKeys(prefix).all, 'listed');
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix });
      expect(await ratelimit.limit('listed')).toMatchObject({ success: true, remaining: 4 });
      expect(await clients.nodeRedis.exists(denyListKeys(prefix).status)).toBe(0);
      expect(feed.requested).toEqual([]);
    });

    it('loads the IP list when its status key is absent: `pending` for 30 s, then the download in `pending`, valid until 2 AM UTC', async () => {
      const prefix = uniquePrefix('deny-load');
      const keys = denyListKeys(prefix);
      // The user's own list holds one of the feed's IPs: it stays out of the IP set, as in the incumbent.
      await clients.nodeRedis.sAdd(keys.all, ['own-entry', '203.0.113.2']);
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix, enableProtection: true, now: () => T0 });
      feed.hold();
      const response = await ratelimit.limit('first');
      expect(response.success).toBe(true);
      expect(await clients.nodeRedis.get(keys.status)).toBe('pending');
      const pendingTtl = await clients.nodeRedis.ttl(keys.status);
      expect(pendingTtl).toBeGreaterThan(25);
      expect(pendingTtl).toBeLessThanOrEqual(30);
      feed.release();
      const [, [withoutOld, deleted, added, kept, union, ok]] = (await response.pending) as [unknown, unknown[]];
      expect([withoutOld, deleted, added, kept, union, ok]).toEqual([2, 0, 5, 4, 6, 'OK']);
      expect(feed.requested).toEqual(['https://raw.githubusercontent.com/stamparm/ipsum/master/levels/6.txt']);
      expect(await clients.nodeRedis.get(keys.status)).toBe('valid');
      const ttl = await clients.nodeRedis.pTTL(keys.status);
      expect(Math.abs(ttl - ipDenyListTtlMs(T0))).toBeLessThan(5_000);
      expect((await clients.nodeRedis.sMembers(keys.ipDenyList)).sort()).toEqual(['203.0.113.0', '203.0.113.1', '203.0.113.3', '203.0.113.4']);
      expect((await clients.nodeRedis.sMembers(keys.all)).sort()).toEqual(['203.0.113.0', '203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', 'own-entry']);
      // Now an IP of the feed is refused.
      expect(await ratelimit.limit('someone', { ip: '203.0.113.4' })).toMatchObject({ success: false, reason: 'denyList', deniedValue: '203.0.113.4' });
    });

    it('two requests at once download the list once (the first to see the status absent)', async () => {
      const prefix = uniquePrefix('deny-once');
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix, enableProtection: true, denyListThreshold: 8 });
      const responses = await Promise.all([ratelimit.limit('x'), ratelimit.limit('y')]);
      const settled = await Promise.all(responses.map((r) => r.pending));
      expect(feed.requested).toHaveLength(1);
      expect(settled.filter((value) => value === undefined)).toHaveLength(1);
      expect(await clients.nodeRedis.sCard(denyListKeys(prefix).ipDenyList)).toBe(2);
    });

    it('a disabled or valid IP list is not downloaded', async () => {
      const prefix = await disabledPrefix('deny-disabled');
      const valid = uniquePrefix('deny-valid');
      await clients.nodeRedis.set(denyListKeys(valid).status, 'valid', { PX: 60_000 });
      for (const p of [prefix, valid]) {
        const response = await new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix: p, enableProtection: true }).limit('x');
        expect(await response.pending).toBeUndefined();
      }
      expect(feed.requested).toEqual([]);
      expect(await clients.nodeRedis.get(denyListKeys(prefix).status)).toBe('disabled');
    });

    it('a failed download: `pending` rejects for whoever awaits it, warns otherwise, and the list is retried once `pending` expires', async () => {
      feed.restore();
      feed = mockIpFeed({}, new TypeError('fetch failed'));
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        const prefix = uniquePrefix('deny-offline');
        const response = await new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(5, '10 s'), prefix, enableProtection: true }).limit('x');
        expect(response.success).toBe(true);
        await expect(response.pending).rejects.toThrow('Failed to fetch ip deny list: TypeError: fetch failed');
        expect(warn).toHaveBeenCalledWith(expect.stringContaining('IP deny list was not refreshed'), expect.any(Error));
        expect(await clients.nodeRedis.get(denyListKeys(prefix).status)).toBe('pending');
      } finally {
        warn.mockRestore();
      }
    });
  });
});
