import { describeWithService, redisService } from '@ratekit/test-utils';
import { fixedWindow } from './fixed-window.js';
import { type Clients, closeClients, openClients, runTimeline, T0, type TimelineRow } from './test-support.js';

// 3 per 10 s. A refused request still counts (INCRBY first, as the incumbent), a refund gives back.
const W = 10_000;
const TIMELINE: TimelineRow[] = [
  { at: 0, success: true, remaining: 2, reset: T0 + W },
  { at: 1_000, success: true, remaining: 1, reset: T0 + W },
  { at: 2_000, success: true, remaining: 0, reset: T0 + W },
  { at: 3_000, success: false, remaining: 0, reset: T0 + W },
  { at: 9_999, success: false, remaining: 0, reset: T0 + W },
  { at: 10_000, success: true, remaining: 2, reset: T0 + 2 * W },
  { at: 10_001, rate: 2, success: true, remaining: 0, reset: T0 + 2 * W },
  { at: 15_000, rate: -1, success: true, remaining: 1, reset: T0 + 2 * W },
  { at: 16_000, success: true, remaining: 0, reset: T0 + 2 * W },
  { at: 17_000, rate: 5, success: false, remaining: 0, reset: T0 + 2 * W },
  { at: 20_000, rate: 4, success: false, remaining: 0, reset: T0 + 3 * W },
];

describeWithService(redisService, 'fixedWindow timeline on a fixed clock, on a real Redis', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', async (kind) => {
    expect(await runTimeline(clients[kind], fixedWindow(3, '10 s'), TIMELINE)).toEqual(TIMELINE);
  });

  it('keys the window number under the prefix, counting every request, expiring one window after the first', async () => {
    const prefix = `ratekit-upstash-test:fw-layout:${process.pid}`;
    await runTimeline(clients.ioredis, fixedWindow(3, '10 s'), TIMELINE.slice(0, 4), { prefix });
    const key = `${prefix}:id:${T0 / W}`;
    expect(await clients.ioredis.get(key)).toBe('4');
    const ttl = await clients.ioredis.pttl(key);
    expect(ttl).toBeGreaterThan(W - 5_000);
    expect(ttl).toBeLessThanOrEqual(W);
    await clients.ioredis.del(key);
  });
});
