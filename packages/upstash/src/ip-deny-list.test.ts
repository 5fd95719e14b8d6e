import { describeWithService, redisService } from '@ratekit/test-utils';
import { denyListKeys } from './deny-list-keys.js';
import { IpDenyList } from './index.js';
import { ipDenyListTtlMs } from './ip-deny-list-feed.js';
import { feedOf, mockIpFeed, type IpFeedMock } from './ip-feed-mock.js';
import { type Clients, closeClients, openClients, uniquePrefix } from './test-support.js';

describe('IpDenyList.ThresholdError', () => {
  it.each([0, -1, 9, Number.NaN, 'test' as unknown as number])('updateIpDenyList rejects threshold %p before any download', async (threshold) => {
    const feed = mockIpFeed({});
    try {
      const error: unknown = await IpDenyList.updateIpDenyList({}, 'p', threshold).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IpDenyList.ThresholdError);
      expect(error).toMatchObject({ name: 'ThresholdError', message: `Allowed threshold values are from 1 to 8, 1 and 8 included. Received: ${String(threshold)}` });
      expect(feed.requested).toEqual([]);
    } finally {
      feed.restore();
    }
  });
});

describeWithService(redisService, 'IpDenyList on a real Redis', (server) => {
  let clients: Clients;
  let feed: IpFeedMock;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));
  beforeEach(() => {
    // Level 1 is larger than one SADD slice of the script (1000).
    feed = mockIpFeed({ 1: feedOf(2_500), 8: feedOf(3), 7: feedOf(2, 50) });
  });
  afterEach(() => feed.restore());

  const members = async (key: string) => (await clients.nodeRedis.sMembers(key)).sort();

  describe.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', (kind) => {
    it("updateIpDenyList: replaces the IP set, keeps the user's own values out of it, status valid until 2 AM UTC by default", async () => {
      const prefix = uniquePrefix('ip-update');
      const keys = denyListKeys(prefix);
      await clients.nodeRedis.sAdd(keys.all, ['own', '203.0.113.1']);
      expect(await IpDenyList.updateIpDenyList(clients[kind], prefix, 8)).toEqual([2, 0, 3, 2, 4, 'OK']);
      expect(await members(keys.ipDenyList)).toEqual(['203.0.113.0', '203.0.113.2']);
      expect(await members(keys.all)).toEqual(['203.0.113.0', '203.0.113.1', '203.0.113.2', 'own']);
      expect(await clients.nodeRedis.get(keys.status)).toBe('valid');
      expect(Math.abs((await clients.nodeRedis.pTTL(keys.status)) - ipDenyListTtlMs(Date.now()))).toBeLessThan(5_000);
      // Another level replaces the IPs: the old ones leave the union set, the user's values stay.
      expect(await IpDenyList.updateIpDenyList(clients[kind], prefix, 7, 5_000)).toEqual([2, 1, 2, 2, 4, 'OK']);
      expect(await members(keys.ipDenyList)).toEqual(['203.0.113.50', '203.0.113.51']);
      expect(await members(keys.all)).toEqual(['203.0.113.1', '203.0.113.50', '203.0.113.51', 'own']);
      const ttl = await clients.nodeRedis.pTTL(keys.status);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5_000);
    });

    it('updateIpDenyList: a list larger than one SADD slice', async () => {
      const prefix = uniquePrefix('ip-large');
      const [, , added, kept, union] = (await IpDenyList.updateIpDenyList(clients[kind], prefix, 1)) as number[];
      expect([added, kept, union]).toEqual([2_500, 2_500, 2_500]);
      expect(await clients.nodeRedis.sCard(denyListKeys(prefix).ipDenyList)).toBe(2_500);
    });

    it("disableIpDenyList: the IPs leave, the user's values stay, status disabled with no TTL; an update overrides it", async () => {
      const prefix = uniquePrefix('ip-disable');
      const keys = denyListKeys(prefix);
      await clients.nodeRedis.sAdd(keys.all, 'own');
      await IpDenyList.updateIpDenyList(clients[kind], prefix, 8);
      expect(await IpDenyList.disableIpDenyList(clients[kind], prefix)).toEqual([1, 1, 'OK']);
      expect(await members(keys.all)).toEqual(['own']);
      expect(await clients.nodeRedis.exists(keys.ipDenyList)).toBe(0);
      expect(await clients.nodeRedis.get(keys.status)).toBe('disabled');
      expect(await clients.nodeRedis.pTTL(keys.status)).toBe(-1);
      await IpDenyList.updateIpDenyList(clients[kind], prefix, 8);
      expect(await clients.nodeRedis.get(keys.status)).toBe('valid');
      expect(await clients.nodeRedis.sCard(keys.all)).toBe(4);
    });
  });

  it('a failed download writes nothing', async () => {
    feed.restore();
    feed = mockIpFeed({}, new TypeError('fetch failed'));
    const prefix = uniquePrefix('ip-offline');
    await expect(IpDenyList.updateIpDenyList(clients.upstash, prefix, 6)).rejects.toThrow('Failed to fetch ip deny list: TypeError: fetch failed');
    expect(await clients.nodeRedis.keys(`${prefix}:*`)).toEqual([]);
  });
});
