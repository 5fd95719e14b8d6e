import { describeWithService, redisService } from '@ratekit/test-utils';
import { type Clients, closeClients, openClients, runTimeline, T0, type TimelineRow } from './test-support.js';
import { tokenBucket } from './token-bucket.js';

// 2 tokens per 10 s, at most 4. Refills come at whole intervals after refilledAt; a take larger
// than the tokens left is refused and takes nothing.
const I = 10_000;
const TIMELINE: TimelineRow[] = [
  { at: 0, success: true, remaining: 3, reset: T0 + I },
  { at: 10, success: true, remaining: 2, reset: T0 + I },
  { at: 20, success: true, remaining: 1, reset: T0 + I },
  { at: 30, success: true, remaining: 0, reset: T0 + I },
  { at: 40, success: false, remaining: 0, reset: T0 + I },
  { at: 9_999, success: false, remaining: 0, reset: T0 + I },
  { at: 10_000, success: true, remaining: 1, reset: T0 + 2 * I }, // one refill: 2 tokens
  { at: 15_000, rate: 2, success: false, remaining: 0, reset: T0 + 2 * I }, // 1 left < 2: nothing taken
  { at: 15_001, success: true, remaining: 0, reset: T0 + 2 * I },
  { at: 55_000, success: true, remaining: 3, reset: T0 + 6 * I }, // four refills, capped at 4
  { at: 55_001, rate: -2, success: true, remaining: 5, reset: T0 + 6 * I }, // a refund may exceed the maximum
  { at: 55_002, rate: 5, success: true, remaining: 0, reset: T0 + 6 * I },
];

describeWithService(redisService, 'tokenBucket timeline on a fixed clock, on a real Redis', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', async (kind) => {
    expect(await runTimeline(clients[kind], tokenBucket(2, '10 s', 4), TIMELINE)).toEqual(TIMELINE);
  });

  it('keeps refilledAt and tokens in a hash, expiring when the bucket would be full', async () => {
    const prefix = `ratekit-upstash-test:tb-layout:${process.pid}`;
    await runTimeline(clients.ioredis, tokenBucket(2, '10 s', 4), TIMELINE.slice(0, 3), { prefix });
    const key = `${prefix}:id`;
    expect(await clients.ioredis.hgetall(key)).toEqual({ refilledAt: String(T0), tokens: '1' });
    const ttl = await clients.ioredis.pttl(key);
    // ceil((4 - 1) / 2) * 10 s = 20 s
    expect(ttl).toBeGreaterThan(2 * I - 5_000);
    expect(ttl).toBeLessThanOrEqual(2 * I);
    await clients.ioredis.del(key);
  });
});
