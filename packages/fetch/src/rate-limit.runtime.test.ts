// @ratekit/fetch with the memory store, as a specification. Written against the runtime matrix's subset of jest
// (no jest.fn, no fake timers: clocks are injected, calls recorded by hand), so that the same file runs under
// jest on Node and on Bun, Deno and workerd (scripts/runtimes).
import { partitionKey, type RateKitError, type RateLimitStore } from '@ratekit/core';
import { rateLimit, withHeaders } from '@ratekit/fetch';

const T0 = 1_700_000_000_000;
const URL_ = 'https://api.example/items';
const CLIENT = '203.0.113.7';

/** A GET of the API. */
const get = (headers?: Record<string, string>, signal?: AbortSignal) => new Request(URL_, { headers, signal });

/** A store whose every call fails, as a Redis that went away. */
const broken: RateLimitStore = { name: 'broken', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('connection refused')), resetKey: () => undefined };

describe('rateLimit (Fetch API)', () => {
  let t = T0;
  const now = () => t;
  beforeEach(() => {
    t = T0;
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

    it('withHeaders sets them on the app’s response in place when its headers can change', async () => {
      const limit = rateLimit({ limit: 5, windowMs: 60_000, now });
      const { headers } = await limit(get(), { ip: CLIENT });
      const own = new Response('ok', { headers: { 'content-type': 'text/plain' } });
      expect(withHeaders(own, headers)).toBe(own);
      expect(own.headers.get('ratelimit')).toBe('"5-in-1min"; r=4; t=60');
    });

    it('withHeaders answers a copy (status, body, headers) when the response’s headers are immutable, as fetch()’s are', async () => {
      const limit = rateLimit({ limit: 5, windowMs: 60_000, now });
      const { headers } = await limit(get(), { ip: CLIENT });
      class Immutable extends Headers {
        override set(): void {
          throw new TypeError('immutable');
        }
      }
      const fetched = new Response('upstream body', { status: 201, statusText: 'Created' });
      Object.defineProperty(fetched, 'headers', { value: new Immutable({ etag: '"v1"' }) });
      const sent = withHeaders(fetched, headers);
      expect(sent).not.toBe(fetched);
      expect([sent.status, sent.statusText, sent.headers.get('etag')]).toEqual([201, 'Created', '"v1"']);
      expect(sent.headers.get('ratelimit')).toBe('"5-in-1min"; r=4; t=60');
      expect(await sent.text()).toBe('upstream body');
    });
  });

  describe('a request over the limit', () => {
    it('is refused with 429, express-rate-limit’s message, the headers and Retry-After, and charges nothing', async () => {
      const limit = rateLimit({ limit: 2, windowMs: 60_000, now });
      await limit(get(), { ip: CLIENT });
      t = T0 + 10_000;
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
      t = T0 + 60_000;
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

  describe('the key: the client address', () => {
    it('takes a string, Bun’s server.requestIP(req) or Deno’s info.remoteAddr', async () => {
      const limit = rateLimit({ limit: 5, now });
      expect((await limit(get(), { ip: CLIENT })).key).toBe(CLIENT);
      expect((await limit(get(), { ip: { address: '198.51.100.1', family: 'IPv4', port: 51234 } as { address: string } })).key).toBe('198.51.100.1');
      expect((await limit(get(), { ip: { hostname: '192.0.2.1', port: 51234, transport: 'tcp' } as { hostname: string } })).key).toBe('192.0.2.1');
    });

    it('groups IPv6 clients by /56, so one client cannot rotate addresses past the limit', async () => {
      const limit = rateLimit({ limit: 2, now });
      const first = await limit(get(), { ip: '2001:db8:1234:5600::1' });
      expect(first.key).toBe('2001:db8:1234:5600::/56');
      await limit(get(), { ip: '2001:db8:1234:56ff:abcd::2' });
      expect((await limit(get(), { ip: '2001:db8:1234:5678::3' })).allowed).toBe(false);
      expect((await limit(get(), { ip: '2001:db8:1234:5700::1' })).allowed).toBe(true); // the next /56
    });

    it('groups IPv6 by ipv6Subnet, or not at all with false', async () => {
      expect((await rateLimit({ ipv6Subnet: 64, now })(get(), { ip: '2001:db8:1234:5678:9abc::1' })).key).toBe('2001:db8:1234:5678::/64');
      expect((await rateLimit({ ipv6Subnet: false, now })(get(), { ip: '2001:db8::1' })).key).toBe('2001:db8::1');
      expect((await rateLimit({ now })(get(), { ip: '::ffff:192.0.2.1' })).key).toBe('192.0.2.1');
    });

    it('ignores X-Forwarded-For unless trustProxy names the proxies (a client could write any address in it)', async () => {
      const spoofed = get({ 'x-forwarded-for': '192.0.2.99' });
      expect((await rateLimit({ now })(spoofed, { ip: CLIENT })).key).toBe(CLIENT);
      const behindOne = get({ 'x-forwarded-for': '192.0.2.99, 198.51.100.20' });
      expect((await rateLimit({ now, trustProxy: 1 })(behindOne, { ip: '10.0.0.2' })).key).toBe('198.51.100.20');
      expect((await rateLimit({ now, trustProxy: 2 })(behindOne, { ip: '10.0.0.2' })).key).toBe('192.0.2.99');
      expect((await rateLimit({ now, trustProxy: (address) => address.startsWith('10.') })(behindOne, { ip: '10.0.0.2' })).key).toBe('198.51.100.20');
    });

    it('reads ipHeader when the edge that sets it is trusted (Cloudflare: cf-connecting-ip)', async () => {
      const limit = rateLimit({ ipHeader: 'cf-connecting-ip', now });
      const result = await limit(get({ 'cf-connecting-ip': '2001:db8:abcd:12ff::1' }));
      expect(result.key).toBe('2001:db8:abcd:1200::/56');
    });

    it('takes a keyGenerator of the request and the given address, whose false lets a request through unlimited', async () => {
      const limit = rateLimit({ limit: 1, now, keyGenerator: (request, ip) => request.headers.get('x-api-key') ?? (ip === undefined ? false : `ip:${ip}`) });
      expect((await limit(get({ 'x-api-key': 'k1' }))).key).toBe('k1');
      expect((await limit(get(), { ip: CLIENT })).key).toBe(`ip:${CLIENT}`);
      const unlimited = await limit(get());
      expect(unlimited).toMatchObject({ allowed: true, key: undefined, decision: undefined });
      expect([...unlimited.headers]).toEqual([]);
    });
  });

  describe('a request without a client address', () => {
    it('rejects with ERR_RATEKIT_KEY when the call gives no ip (no silent fall-back to a header)', async () => {
      const limit = rateLimit({ now });
      // @ts-expect-error -- the call's type requires `ip` when neither keyGenerator nor ipHeader is set
      await expect(limit(get({ 'x-forwarded-for': CLIENT }))).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('the call gave no `ip`') });
      await expect(limit(get(), { ip: undefined })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });

    it('rejects with ERR_RATEKIT_KEY when Bun gives null (a Unix socket)', async () => {
      await expect(rateLimit({ now })(get(), { ip: null })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('null') });
    });

    it('rejects with ERR_RATEKIT_KEY when the trusted edge header is missing', async () => {
      await expect(rateLimit({ ipHeader: 'cf-connecting-ip', now })(get(), { ip: CLIENT })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('cf-connecting-ip') });
    });

    it('rejects with ERR_RATEKIT_KEY when the keyGenerator throws or returns no usable key', async () => {
      const throwing = rateLimit({
        now,
        keyGenerator: () => {
          throw new Error('no session');
        },
      });
      await expect(throwing(get())).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('no session') });
      await expect(rateLimit({ now, keyGenerator: () => '' })(get())).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });
  });

  describe('options are checked when the function is built', () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['limit', { limit: 0 }],
      ['windowMs', { windowMs: -1 }],
      ['algorithm', { algorithm: 'leaky' }],
      ['limit', { limits: { limit: 1, windowMs: 1_000 }, limit: 5 }],
      ['statusCode', { statusCode: 200 }],
      ['standardHeaders', { standardHeaders: 'draft-5' }],
      ['legacyHeaders', { legacyHeaders: 'yes' }],
      ['trustProxy', { trustProxy: true }],
      ['ipv6Subnet', { ipv6Subnet: 129 }],
      ['ipHeader', { ipHeader: 'not a header' }],
      ['trustProxy', { ipHeader: 'cf-connecting-ip', trustProxy: 1 }],
      ['ipHeader', { keyGenerator: () => 'k', ipHeader: 'cf-connecting-ip' }],
      ['message', { message: 'x', handler: () => new Response() }],
      ['skip', { skip: true }],
      ['max', { max: 5 }],
      ['skipFailedRequests', { skipFailedRequests: true }],
      ['onStoreError', { onStoreError: 'ignore' }],
      ['storeTimeoutMs', { storeTimeoutMs: -5 }],
      ['store', { store: {} }],
    ];
    it.each(bad)('refuses a bad `%s`: %j', (option, options) => {
      let thrown: unknown;
      try {
        rateLimit(options as Parameters<typeof rateLimit>[0]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
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
      const write = await limit(new Request(URL_, { method: 'POST', headers: { 'x-items': '4' } }), { ip: CLIENT });
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

  describe('waitUntil', () => {
    it('hands onDecision’s work to the call’s context and answers without waiting for it', async () => {
      const handed: Array<Promise<unknown>> = [];
      let finish: () => void = () => undefined;
      const seen: string[] = [];
      const limit = rateLimit({
        now,
        onDecision: (decision, _request, key) =>
          new Promise<void>((resolve) => {
            finish = () => {
              seen.push(`${key}: ${decision.remaining}`);
              resolve();
            };
          }),
      });
      const result = await limit(get(), { ip: CLIENT, context: { waitUntil: (promise) => handed.push(promise) } });
      expect(result.allowed).toBe(true);
      expect(handed).toHaveLength(1);
      expect(seen).toEqual([]); // answered while the work is still pending
      finish();
      await handed[0];
      expect(seen).toEqual([`${CLIENT}: 4`]);
    });

    it('awaits the work when the call gives no context, and reports its failure to onError, not to the response', async () => {
      const errors: RateKitError[] = [];
      const limit = rateLimit({ now, onError: (error) => errors.push(error), onDecision: () => Promise.reject(new Error('metrics down')) });
      const result = await limit(get(), { ip: CLIENT });
      expect(result.allowed).toBe(true);
      expect(errors).toHaveLength(1);
      expect(errors[0]?.message).toContain('metrics down');
    });

    it('reports a failure handed to waitUntil to onError too, and never hands over a rejecting promise', async () => {
      const errors: RateKitError[] = [];
      const handed: Array<Promise<unknown>> = [];
      const limit = rateLimit({ now, onError: (error) => errors.push(error), onDecision: () => Promise.reject(new Error('metrics down')) });
      await limit(get(), { ip: CLIENT, context: { waitUntil: (promise) => handed.push(promise) } });
      await expect(handed[0]).resolves.toBeUndefined();
      expect(errors.map((error) => error.message)).toEqual([expect.stringContaining('metrics down')]);
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
