import { describeWithService, redisService } from '@ratekit/test-utils';
import { cachedFixedWindow } from './cached-fixed-window.js';
import { type Clients, closeClients, openClients, runTimeline, T0, type TimelineRow } from './test-support.js';

// 3 per 10 s, one instance: the first request of a window asks Redis, the others count in the
// cache (remaining may go negative, as in the incumbent); a new window asks Redis again.
const W = 10_000;
const TIMELINE: TimelineRow[] = [
  { at: 0, success: true, remaining: 2, reset: T0 + W },
  { at: 1, success: true, remaining: 1, reset: T0 + W },
  { at: 2, success: true, remaining: 0, reset: T0 + W },
  { at: 3, success: false, remaining: -1, reset: T0 + W },
  { at: 9_999, rate: 2, success: false, remaining: -3, reset: T0 + W },
  { at: 10_000, rate: 3, success: true, remaining: 0, reset: T0 + 2 * W },
  { at: 10_001, success: false, remaining: -1, reset: T0 + 2 * W },
];

describeWithService(redisService, 'cachedFixedWindow timeline on a fixed clock, on a real Redis', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', async (kind) => {
    expect(await runTimeline(clients[kind], cachedFixedWindow(3, '10 s'), TIMELINE, { ephemeralCache: new Map() })).toEqual(TIMELINE);
  });

  it('counts admitted requests in Redis, in pending, under the fixed window key, with a TTL of one window', async () => {
    const prefix = `ratekit-upstash-test:cfw-layout:${process.pid}`;
    await runTimeline(clients.ioredis, cachedFixedWindow(3, '10 s'), TIMELINE.slice(0, 5), { prefix, ephemeralCache: new Map() });
    const key = `${prefix}:id:${T0 / W}`;
    // The background increments may still be in flight: wait for them, not for a time.
    for (let i = 0; i < 100 && (await clients.ioredis.get(key)) !== '3'; i++) await clients.ioredis.ping();
    expect(await clients.ioredis.get(key)).toBe('3');
    const ttl = await clients.ioredis.pttl(key);
    expect(ttl).toBeGreaterThan(W - 5_000);
    expect(ttl).toBeLessThanOrEqual(W);
    await clients.ioredis.del(key);
  });
});
