import { describeWithService, redisService } from '@ratekit/test-utils';
import { rateLimitHeaders } from './headers.js';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, FixedClock, openClients, T0, uniquePrefix } from './test-support.js';
import type { RatelimitResponse } from './types.js';

const response = (fields: Partial<RatelimitResponse>): RatelimitResponse => ({ success: true, limit: 10, remaining: 7, reset: T0 + 4_200, pending: Promise.resolve(), ...fields });

describe('rateLimitHeaders', () => {
  it('writes draft-8 RateLimit and RateLimit-Policy from a response and its window', () => {
    expect(rateLimitHeaders(response({}), { window: '10 s', now: T0 })).toEqual([
      ['RateLimit', '"10-in-10sec"; r=7; t=5'],
      ['RateLimit-Policy', '"10-in-10sec"; q=10; w=10'],
    ]);
  });

  it('adds Retry-After on a refusal, and the hashed partition key, names and styles', () => {
    expect(rateLimitHeaders(response({ success: false, remaining: 0 }), { window: 10_000, now: T0, partitionKey: '203.0.113.7', name: 'api', style: 'canonical' })).toEqual([
      ['RateLimit', '"api";r=0;t=5'],
      ['RateLimit-Policy', expect.stringMatching(/^"api";q=10;w=10;pk=:[A-Za-z0-9+/=]+:$/)],
      ['Retry-After', '5'],
    ]);
  });

  it('gives no headers for a response that failed open, and asks for the window of a foreign response', () => {
    expect(rateLimitHeaders(response({ reason: 'timeout', limit: 0, remaining: 0, reset: 0 }))).toEqual([]);
    // Nor for a deny-list refusal: no rate limit, nothing to wait for (from the cache, with no figures, or from Redis).
    expect(rateLimitHeaders(response({ success: false, reason: 'denyList', deniedValue: 'ip', limit: 0, remaining: 0, reset: 0 }))).toEqual([]);
    expect(rateLimitHeaders(response({ success: false, reason: 'denyList', deniedValue: 'ip', limit: 10, remaining: 0, reset: Date.now() + 5_000 }), { window: '10 s' })).toEqual([]);
    expect(() => rateLimitHeaders(response({}))).toThrow(/options.window/);
  });
});

describeWithService(redisService, 'rateLimitHeaders for responses of Ratelimit', (server) => {
  let clients: Clients;
  let redis: Clients['ioredis'];
  beforeAll(async () => {
    clients = await openClients(server().url);
    redis = clients.ioredis;
  });
  afterAll(() => closeClients(clients));

  it('knows the window of each algorithm it gave, and advertises a bucket by its refill', async () => {
    const clock = new FixedClock(T0 + 2_500);
    const open = (limiter: ReturnType<typeof Ratelimit.fixedWindow>) => new Ratelimit({ redis, limiter, prefix: uniquePrefix('headers'), now: clock.now });
    const fixed = await open(Ratelimit.fixedWindow(5, '10 s')).limit('u');
    expect(rateLimitHeaders(fixed, { now: clock.ms })).toEqual([
      ['RateLimit', '"5-in-10sec"; r=4; t=8'],
      ['RateLimit-Policy', '"5-in-10sec"; q=5; w=10'],
    ]);
    const bucket = open(Ratelimit.tokenBucket(1, '1 s', 5));
    await bucket.limit('u', { rate: 4 });
    const last = await bucket.limit('u', { rate: 2 });
    expect(last.success).toBe(false);
    // A refused response says remaining 0 (the incumbent's), though 1 token is left for a request of 1.
    expect(last.remaining).toBe(0);
    expect(rateLimitHeaders(last, { now: clock.ms })).toEqual([
      ['RateLimit', '"1-in-1sec"; r=0; t=1'],
      ['RateLimit-Policy', '"1-in-1sec"; q=5; w=5'],
      ['Retry-After', '1'],
    ]);
  });
  it('finds the policy through `pending`: cache refusals, copies, analytics and the cached window keep it', async () => {
    const clock = new FixedClock(T0 + 2_500);
    const policyOf = (response: RatelimitResponse): string | undefined => rateLimitHeaders(response, { now: clock.ms }).find(([name]) => name === 'RateLimit-Policy')?.[1];

    const fixed = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(1, '10 s'), prefix: uniquePrefix('headers'), now: clock.now, ephemeralCache: new Map() });
    await fixed.limit('u');
    expect((await fixed.limit('u')).success).toBe(false); // refused by Redis: `u` is now blocked in the cache
    const blocked = await fixed.limit('u');
    expect(blocked.reason).toBe('cacheBlock');
    expect(policyOf(blocked)).toBe('"1-in-10sec"; q=1; w=10');
    expect(policyOf({ ...blocked })).toBe('"1-in-10sec"; q=1; w=10');

    const counted = new Ratelimit({ redis: clients.upstash, limiter: Ratelimit.slidingWindow(3, '10 s'), prefix: uniquePrefix('headers'), now: clock.now, analytics: true });
    const recorded = await counted.limit('u');
    await recorded.pending;
    expect(policyOf(recorded)).toBe('"3-in-10sec"; q=3; w=10');

    const cached = new Ratelimit({ redis, limiter: Ratelimit.cachedFixedWindow(2, '10 s'), prefix: uniquePrefix('headers'), now: clock.now, ephemeralCache: new Map() });
    await cached.limit('u');
    const fromCache = await cached.limit('u'); // answered from the cache; Redis is told in `pending`
    await fromCache.pending;
    expect(policyOf(fromCache)).toBe('"2-in-10sec"; q=2; w=10');

    // Two limiters never share a policy, though both have responses with no work left.
    const other = await new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(7, '1 s'), prefix: uniquePrefix('headers'), now: clock.now }).limit('u');
    expect(policyOf(other)).toBe('"7-in-1sec"; q=7; w=1');
  });
});
