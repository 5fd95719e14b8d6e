import { describeWithService, redisService } from '@ratekit/test-utils';
import { slidingWindow } from './sliding-window.js';
import { type Clients, closeClients, openClients, runTimeline, T0, type TimelineRow } from './test-support.js';

// 4 per 10 s. The previous window weighs floor((1 - elapsed share) * count); a refusal counts nothing.
const W = 10_000;
const TIMELINE: TimelineRow[] = [
  { at: 0, success: true, remaining: 3, reset: T0 + W },
  { at: 1, success: true, remaining: 2, reset: T0 + W },
  { at: 2, success: true, remaining: 1, reset: T0 + W },
  { at: 3, success: true, remaining: 0, reset: T0 + W },
  { at: 5_000, success: false, remaining: 0, reset: T0 + W },
  { at: 10_000, success: false, remaining: 0, reset: T0 + 2 * W }, // previous 4 weighs 4
  { at: 12_500, success: true, remaining: 0, reset: T0 + 2 * W }, // floor(0.75 * 4) = 3, + 0 < 4
  { at: 15_000, success: true, remaining: 0, reset: T0 + 2 * W }, // floor(0.5 * 4) = 2, + 1 < 4
  { at: 17_500, success: true, remaining: 0, reset: T0 + 2 * W }, // 1 + 2 < 4
  { at: 19_999, success: true, remaining: 0, reset: T0 + 2 * W }, // 0 + 3 < 4
  { at: 20_000, success: false, remaining: 0, reset: T0 + 3 * W }, // previous 4 weighs 4
  { at: 25_000, rate: 2, success: true, remaining: 0, reset: T0 + 3 * W }, // 2 + 0 < 4: admitted, then 2 + 2
  // floor(0.3 * 4) = 1, + 2 = 3 < 4 passes the incumbent's check (made before the increment,
  // without the rate), so 5 is counted (7); the answer is 4 - (7 + 1) < 0: success false.
  { at: 27_000, rate: 5, success: false, remaining: 0, reset: T0 + 3 * W },
  { at: 29_999, success: false, remaining: 0, reset: T0 + 3 * W }, // 0 + 7 >= 4
];

describeWithService(redisService, 'slidingWindow timeline on a fixed clock, on a real Redis', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', async (kind) => {
    expect(await runTimeline(clients[kind], slidingWindow(4, '10 s'), TIMELINE)).toEqual(TIMELINE);
  });

  it('keeps one counter per window, expiring two windows and a second after its first request', async () => {
    const prefix = `ratekit-upstash-test:sw-layout:${process.pid}`;
    await runTimeline(clients.nodeRedis, slidingWindow(4, '10 s'), TIMELINE.slice(0, 8), { prefix });
    const first = `${prefix}:id:${T0 / W}`;
    const second = `${prefix}:id:${T0 / W + 1}`;
    expect([await clients.ioredis.get(first), await clients.ioredis.get(second)]).toEqual(['4', '2']);
    const ttl = await clients.ioredis.pttl(second);
    expect(ttl).toBeGreaterThan(2 * W + 1_000 - 5_000);
    expect(ttl).toBeLessThanOrEqual(2 * W + 1_000);
    await clients.ioredis.del(first, second);
  });
});
