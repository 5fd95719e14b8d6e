import { downloadIpDenyList, IP_DENY_LIST_FEED_URL, ipDenyListTtlMs } from './ip-deny-list-feed.js';
import { feedOf, mockIpFeed, type IpFeedMock } from './ip-feed-mock.js';

describe('ipDenyListTtlMs: until the next 2 AM UTC', () => {
  const day = Date.UTC(2026, 10, 29);
  it.each([
    ['midnight', day, 2 * 3_600_000],
    ['01:00', day + 3_600_000, 3_600_000],
    ['one ms before 02:00', day + 2 * 3_600_000 - 1, 1],
    ['exactly 02:00: a whole day', day + 2 * 3_600_000, 24 * 3_600_000],
    ['02:00:00.001', day + 2 * 3_600_000 + 1, 24 * 3_600_000 - 1],
    ['23:30', day + 23.5 * 3_600_000, 2.5 * 3_600_000],
  ])('%s', (_, now, ttl) => {
    expect(ipDenyListTtlMs(now)).toBe(ttl);
  });
});

describe('downloadIpDenyList', () => {
  let feed: IpFeedMock | undefined;
  afterEach(() => feed?.restore());

  it("fetches the incumbent's URL for the level and keeps the non-empty lines", async () => {
    feed = mockIpFeed({ 3: `${feedOf(2)}\n` });
    expect(await downloadIpDenyList(3)).toEqual(['203.0.113.0', '203.0.113.1']);
    expect(feed.requested).toEqual([`${IP_DENY_LIST_FEED_URL}/3.txt`]);
    expect(IP_DENY_LIST_FEED_URL).toBe('https://raw.githubusercontent.com/stamparm/ipsum/master/levels');
  });

  it("rejects with the incumbent's message on an HTTP error", async () => {
    feed = mockIpFeed({});
    await expect(downloadIpDenyList(5)).rejects.toThrow('Failed to fetch ip deny list: Error: Error fetching data: Not Found');
  });

  it('rejects with the cause when the network fails', async () => {
    feed = mockIpFeed({}, new TypeError('fetch failed'));
    await expect(downloadIpDenyList(5)).rejects.toThrow('Failed to fetch ip deny list: TypeError: fetch failed');
  });
});
