// @ratekit/fetch with the memory store, as a specification: passes, refusals, headers, the request's cost and
// limits, the delay algorithm and store failures. Written against the runtime matrix's subset of jest (no jest.fn,
// no fake timers: clocks are injected, calls recorded by hand), so the same file runs under jest on Node and on Bun,
// Deno and workerd (scripts/runtimes).
import { partitionKey, type RateKitError } from '@ratekit/core';
import { rateLimit } from '@ratekit/fetch';
import { broken, CLIENT, get, T0, testClock } from './test-support.js';

describe('rateLimit (Fetch API)', () => {
  const clock = testClock();
  const now = clock.now;
  beforeEach(() => {
    clock.t = T0;
  });

  describe('a request within the limit', () => {
    it('passes, with the headers to add to the app’s response (draft-8 by default)', async () => {
      const limit = rateLimit({ limit: 5, windowMs: 60_000, now });
      const result = await limit(get(), { ip: CLIENT });
      expect(result.allowed).toBe(true);
      expect(result.response).toBeUndefined();
      expect(result.key).toBe(CLIENT);
      expect(result.decision).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
      expect([...result.headers]).toEqual([
        ['ratelimit', '"5-in-1min"; r=4; t=60'],
        ['ratelimit-policy', `"5-in-1min"; q=5; w=60; pk=:${partitionKey(CLIENT)}:`],
      ]);
    });

    it('counts down per key, each client on its own', async () => {
      const limit = rateLimit({ limit: 3, windowMs: 1_000, now });
      const remaining = [];
      for (const ip of [CLIENT, CLIENT, '198.51.100.1', CLIENT]) remaining.push((await limit(get(), { ip })).decision?.remaining);
      expect(remaining).toEqual([2, 1, 2, 0]);
    });
  });

  describe('a request over the limit', () => {
    it('is refused with 429, express-rate-limit’s message, the headers and Retry-After, and charges nothing', async () => {
      const limit = rateLimit({ limit: 2, windowMs: 60_000, now });
      await limit(get(), { ip: CLIENT });
      clock.t = T0 + 10_000;
      await limit(get(), { ip: CLIENT });
      const result = await limit(get(), { ip: CLIENT });
      expect(result.allowed).toBe(false);
      const response = result.response!;
      expect(response.status).toBe(429);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text()).toBe('Too many requests, please try again later.');
      expect(response.headers.get('retry-after')).toBe('50');
      expect(response.headers.get('ratelimit')).toBe('"2-in-1min"; r=0; t=50');
      expect(result.headers.get('retry-after')).toBe('50');
      expect(result.decision).toMatchObject({ allowed: false, remaining: 0 });
      clock.t = T0 + 60_000;
      expect((await limit(get(), { ip: CLIENT })).decision?.remaining).toBe(1);
    });

    it('answers statusCode and a message object as JSON', async () => {
      const limit = rateLimit({ limit: 1, now, statusCode: 503, message: { error: 'slow down' } });
      await limit(get(), { ip: CLIENT });
      const { response } = await limit(get(), { ip: CLIENT });
      expect(response?.status).toBe(503);
      expect(response?.headers.get('content-type')).toBe('application/json');
      expect(await response?.json()).toEqual({ error: 'slow down' });
    });

    it('answers a message function of the request and decision', async () => {
      const limit = rateLimit({ limit: 1, now, message: async (request, decision) => `${new URL(request.url).pathname}: retry in ${decision.retryAfterMs} ms` });
      await limit(get(), { ip: CLIENT });
      expect(await (await limit(get(), { ip: CLIENT })).response?.text()).toBe('/items: retry in 60000 ms');
    });

    it('answers the handler’s Response, with the rate-limit headers set on it', async () => {
      const limit = rateLimit({ limit: 1, now, handler: (_request, decision) => Response.json({ retryAfterMs: decision.retryAfterMs }, { status: 429, headers: { 'x-app': 'yes' } }) });
      await limit(get(), { ip: CLIENT });
      const { response } = await limit(get(), { ip: CLIENT });
      expect(await response?.json()).toEqual({ retryAfterMs: 60_000 });
      expect(response?.headers.get('x-app')).toBe('yes');
      expect(response?.headers.get('retry-after')).toBe('60');
      expect(response?.headers.get('ratelimit')).toBe('"1-in-1min"; r=0; t=60');
    });
  });

  describe('headers', () => {
    const cases: Array<[string, Parameters<typeof rateLimit>[0], Array<[string, string]>]> = [
      [
        'draft-6',
        { standardHeaders: 'draft-6' },
        [
          ['ratelimit-limit', '2'],
          ['ratelimit-policy', '2;w=60'],
          ['ratelimit-remaining', '1'],
          ['ratelimit-reset', '60'],
        ],
      ],
      [
        'draft-7',
        { standardHeaders: 'draft-7' },
        [
          ['ratelimit', 'limit=2, remaining=1, reset=60'],
          ['ratelimit-policy', '2;w=60'],
        ],
      ],
      [
        'draft-8',
        { standardHeaders: 'draft-8' },
        [
          ['ratelimit', '"2-in-1min"; r=1; t=60'],
          ['ratelimit-policy', `"2-in-1min"; q=2; w=60; pk=:${partitionKey(CLIENT)}:`],
        ],
      ],
      [
        'legacy only',
        { standardHeaders: false, legacyHeaders: true },
        [
          ['x-ratelimit-limit', '2'],
          ['x-ratelimit-remaining', '1'],
          ['x-ratelimit-reset', String(Math.ceil((T0 + 60_000) / 1_000))],
        ],
      ],
      ['none', { standardHeaders: false }, []],
    ];
    it.each(cases)('%s on a pass', async (_name, options, expected) => {
      const limit = rateLimit({ limit: 2, windowMs: 60_000, now, ...options });
      const { headers } = await limit(get(), { ip: CLIENT });
      expect([...headers].filter(([name]) => name !== 'date').sort()).toEqual([...expected].sort());
    });

    it('lists every limit of a policy in draft-8, on passes and refusals', async () => {
      const limit = rateLimit({
        limits: [
          { limit: 1, windowMs: 1_000, name: 'second' },
          { limit: 100, windowMs: 3_600_000, name: 'hour' },
        ],
        now,
      });
      const pass = await limit(get(), { ip: CLIENT });
      expect(pass.headers.get('ratelimit')).toBe('"second"; r=0; t=1, "hour"; r=99; t=3600');
      const refused = await limit(get(), { ip: CLIENT });
      expect(refused.response?.headers.get('ratelimit')).toBe('"second"; r=0; t=1, "hour"; r=99; t=3600');
      expect(refused.response?.headers.get('retry-after')).toBe('1');
    });
  });

  describe('skip, cost and limits of the request', () => {
    it('skip lets a request through uncounted and without headers', async () => {
      const limit = rateLimit({ limit: 1, now, skip: (request) => new URL(request.url).pathname === '/health' });
      for (let i = 0; i < 3; i++) expect((await limit(new Request('https://api.example/health'), { ip: CLIENT })).headers.has('ratelimit')).toBe(false);
      expect((await limit(get(), { ip: CLIENT })).allowed).toBe(true);
    });

    it('charges cost(request), and takes limits(request)', async () => {
      const limit = rateLimit({
        now,
        limits: (request) => (request.method === 'POST' ? { limit: 10, windowMs: 60_000, name: 'writes' } : { limit: 100, windowMs: 60_000, name: 'reads' }),
        cost: (request) => Number(request.headers.get('x-items') ?? 1),
      });
      const write = await limit(new Request(get().url, { method: 'POST', headers: { 'x-items': '4' } }), { ip: CLIENT });
      expect(write.decision).toMatchObject({ policy: 'writes', remaining: 6, cost: 4 });
      expect((await limit(get(), { ip: CLIENT })).decision).toMatchObject({ policy: 'reads', remaining: 99 });
    });

    it('holds a pass of the delay algorithm, and lets it go when the client leaves', async () => {
      const limit = rateLimit({ algorithm: 'delay', limit: 1, windowMs: 60_000, now });
      await limit(get(), { ip: CLIENT });
      const gone = new AbortController();
      gone.abort();
      const held = await limit(get(undefined, gone.signal), { ip: CLIENT }); // would wait 60 s if the abort were ignored
      expect(held.allowed).toBe(true);
      expect(held.headers.get('x-slow-down-delay')).toBe('60000');
    });
  });

  describe('store failures follow onStoreError', () => {
    it("'throw' (the default): the call rejects with ERR_RATEKIT_STORE", async () => {
      const limit = rateLimit({ store: broken, now });
      await expect(limit(get(), { ip: CLIENT })).rejects.toMatchObject({ code: 'ERR_RATEKIT_STORE' });
    });

    it("'allow': the request passes and the error goes to onError", async () => {
      const errors: RateKitError[] = [];
      const limit = rateLimit({ store: broken, now, onStoreError: 'allow', onError: (error) => errors.push(error) });
      expect((await limit(get(), { ip: CLIENT })).allowed).toBe(true);
      expect(errors.map((error) => error.code)).toEqual(['ERR_RATEKIT_STORE']);
    });

    it("'deny': the request is refused with 429 and the error goes to onError", async () => {
      const errors: RateKitError[] = [];
      const limit = rateLimit({ store: broken, now, onStoreError: 'deny', onError: (error) => errors.push(error) });
      const result = await limit(get(), { ip: CLIENT });
      expect(result.response?.status).toBe(429);
      expect(errors.map((error) => error.code)).toEqual(['ERR_RATEKIT_STORE']);
    });
  });

  it('exposes its limiter, for refund, reset and peek', async () => {
    const limit = rateLimit({ limit: 1, now });
    await limit(get(), { ip: CLIENT });
    expect((await limit(get(), { ip: CLIENT })).allowed).toBe(false);
    await limit.limiter.reset(CLIENT);
    expect((await limit(get(), { ip: CLIENT })).allowed).toBe(true);
  });
});
