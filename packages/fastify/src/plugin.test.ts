import { createLimiter, type Decision, memoryStore, rateLimitHeaders, type RateLimitStore } from '@ratekit/core';
import { request as httpRequest } from 'node:http';
import Fastify5, { type FastifyInstance } from 'fastify';
import Fastify4 from 'fastify4';
import fastifyRateLimit, { EARLY_ROUTES_WARNING, type RateLimitPluginOptions } from './index.js';

type Factory = typeof Fastify5;
const VERSIONS: Array<[string, Factory]> = [
  ['Fastify 5', Fastify5],
  ['Fastify 4', Fastify4 as unknown as Factory],
];

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
let t = T0;
const now = () => t;
const at = (seconds: number) => {
  t = T0 + seconds * 1000;
};

const apps: FastifyInstance[] = [];
afterEach(async () => {
  t = T0;
  jest.restoreAllMocks();
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A store whose every call fails, as a remote store does when its server is down. */
const brokenStore: RateLimitStore = {
  name: 'broken',
  shared: true,
  clock: 'caller',
  evaluate: () => Promise.reject(new Error('connection refused')),
  resetKey: () => undefined,
};

describe.each(VERSIONS)('fastifyRateLimit on %s', (_version, Fastify) => {
  /** An app with the plugin registered (clock fixed at `t`), then the routes. */
  async function build(options: RateLimitPluginOptions, routes: (app: FastifyInstance) => void = defaultRoutes, factoryOptions = {}) {
    const app = Fastify(factoryOptions);
    apps.push(app);
    await app.register(fastifyRateLimit, { now, ...options });
    routes(app);
    await app.ready();
    return app;
  }

  function defaultRoutes(app: FastifyInstance): void {
    app.get('/', async () => 'ok');
    app.get('/other', async () => 'other');
  }

  /** The status codes of `n` GETs of `url`. */
  async function statuses(app: FastifyInstance, url: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await app.inject({ url, headers })).statusCode);
    return out;
  }

  describe('registration', () => {
    it('is a fastify-plugin named @ratekit/fastify for Fastify 4 and 5', async () => {
      const app = await build({});
      expect(app.hasPlugin('@ratekit/fastify')).toBe(true);
      expect((fastifyRateLimit as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')]).toEqual({ fastify: '4.x || 5.x', name: '@ratekit/fastify' });
    });

    it('limits every route declared after it, all of them sharing one count per key (global)', async () => {
      const app = await build({ max: 2 });
      expect([...(await statuses(app, '/', 1)), ...(await statuses(app, '/other', 1)), ...(await statuses(app, '/', 1))]).toEqual([200, 200, 429]);
    });

    it('counts a HEAD request on its GET route', async () => {
      const app = await build({ max: 2 });
      expect((await app.inject({ method: 'HEAD', url: '/' })).headers['x-ratelimit-remaining']).toBe('1');
      expect((await app.inject({ url: '/' })).headers['x-ratelimit-remaining']).toBe('0');
    });

    it('with global: false, limits only the routes that ask for it', async () => {
      const app = await build({ global: false, max: 1 }, (a) => {
        a.get('/', async () => 'ok');
        a.get('/limited', { config: { rateLimit: {} } }, async () => 'ok');
      });
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 200]);
      expect((await app.inject('/')).headers['x-ratelimit-limit']).toBeUndefined();
      expect(await statuses(app, '/limited', 2)).toEqual([200, 429]);
    });

    it.each([
      [{ max: 0 }, 'max', 'Expected `max` to be an integer >= 1, got 0'],
      [{ timeWindow: 'soon' }, 'timeWindow', 'Expected `timeWindow` to be a positive number of milliseconds or a duration string such as \'1 minute\', got "soon"'],
      [{ hook: 'onSend' }, 'hook', "Expected `hook` to be one of 'onRequest', 'preParsing', 'preValidation', 'preHandler', got \"onSend\""],
      [{ redis: {} }, 'redis', 'pass a ratekit `store`'],
      [{ maxx: 5 }, 'maxx', 'it is not an option of @ratekit/fastify'],
      [{ addHeaders: { 'ratelimit-limit': false } }, "addHeaders['ratelimit-limit']", "a header the configured format sends ('x-ratelimit-limit'"],
      [{ limits: { limit: 5, windowMs: 1000 }, max: 5 }, 'max', 'unset when `limits` is given'],
      [{ enableDraftSpec: true, standardHeaders: 'draft-8' }, 'standardHeaders', 'unset when `enableDraftSpec` is true'],
      // Checked by the gate, as in every adapter:
      [{ cost: -1 }, 'cost', 'Expected `cost` to be a finite number >= 0'],
      [{ ipv6Subnet: 129 }, 'ipv6Subnet', 'an integer from 1 to 128, or false'],
      [{ keyGenerator: 'ip' }, 'keyGenerator', 'Expected `keyGenerator` to be a function'],
      [{ onStoreError: 'retry' }, 'onStoreError', "'throw', 'allow', 'deny' or a fallback limiter"],
      [{ storeTimeoutMs: 0 }, 'storeTimeoutMs', 'a positive finite number of milliseconds'],
      [
        {
          limits: [
            { limit: 1, windowMs: 1 },
            { limit: 2, windowMs: 2 },
          ],
          continueExceeding: true,
        },
        'continueExceeding',
        'the policy is one limit',
      ],
    ])('refuses to register with %j: a RateKitOptionError naming `%s`', async (options, option, message) => {
      const app = Fastify();
      apps.push(app);
      // `now` (a ratekit option) selects ratekit mode, which validates; @fastify/rate-limit options alone fall back as upstream does.
      await expect(app.register(fastifyRateLimit, { now, ...options } as RateLimitPluginOptions)).rejects.toMatchObject({
        name: 'RateKitOptionError',
        code: 'ERR_RATEKIT_INVALID_OPTION',
        option,
        message: expect.stringContaining(message),
      });
    });
  });

  describe('max and timeWindow', () => {
    it('admits max requests per timeWindow (a duration string) and the next window starts afresh', async () => {
      const app = await build({ max: 2, timeWindow: '10 seconds' });
      const got: Array<[number, number, string | undefined]> = [];
      for (const s of [0, 1, 2, 9, 10]) {
        at(s);
        const res = await app.inject('/');
        got.push([s, res.statusCode, res.headers['x-ratelimit-remaining'] as string]);
      }
      // time (s), status, remaining
      expect(got).toEqual([
        [0, 200, '1'],
        [1, 200, '0'],
        [2, 429, '0'],
        [9, 429, '0'],
        [10, 200, '1'],
      ]);
    });

    it('takes timeWindow in milliseconds', async () => {
      const app = await build({ max: 1, timeWindow: 30_000 });
      const res = await app.inject('/');
      expect(res.headers['x-ratelimit-reset']).toBe('30');
    });

    it('defaults to 1000 per minute', async () => {
      const app = await build({});
      const res = await app.inject('/');
      expect(res.headers).toMatchObject({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': '60' });
    });

    it('takes max as an async function of the request and key', async () => {
      const app = await build({ max: async (request) => (request.headers['x-plan'] === 'pro' ? 3 : 1) });
      expect(await statuses(app, '/', 4, { 'x-plan': 'pro' })).toEqual([200, 200, 200, 429]);
      const free = await build({ max: async (request) => (request.headers['x-plan'] === 'pro' ? 3 : 1) });
      expect(await statuses(free, '/', 2)).toEqual([200, 429]);
    });

    it('uses the algorithm given for max/timeWindow', async () => {
      // A token bucket of 2 per 10 s refills one token every 5 s; a fixed window would wait the whole 10 s.
      const app = await build({ max: 2, timeWindow: '10s', algorithm: 'token-bucket' });
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 429]);
      at(5);
      expect(await statuses(app, '/', 2)).toEqual([200, 429]);
    });
  });

  describe('limits, cost and dynamic limits (ratekit options)', () => {
    it('applies several limits all-or-nothing and reports each in draft-8 headers', async () => {
      const app = await build({
        limits: [
          { limit: 3, windowMs: 1_000, name: 'per-second' },
          { limit: 5, windowMs: 60_000, name: 'per-minute' },
        ],
        standardHeaders: 'draft-8',
      });
      expect(await statuses(app, '/', 4)).toEqual([200, 200, 200, 429]);
      at(1);
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 429]);
      const res = await app.inject('/');
      expect(res.headers.ratelimit).toMatch(/^"per-second"; r=\d+; t=\d+, "per-minute"; r=0; t=59$/);
    });

    it('charges cost per request (a function of the request)', async () => {
      const app = await build({ max: 4, cost: (request) => (request.method === 'POST' ? 2 : 1) }, (a) => {
        a.get('/', async () => 'ok');
        a.post('/', async () => 'ok');
      });
      expect((await app.inject({ method: 'POST', url: '/' })).headers['x-ratelimit-remaining']).toBe('2');
      expect((await app.inject({ method: 'GET', url: '/' })).headers['x-ratelimit-remaining']).toBe('1');
      expect((await app.inject({ method: 'POST', url: '/' })).statusCode).toBe(429);
    });

    it('chooses limits per request with a limits function', async () => {
      const free = { limit: 1, windowMs: 60_000 };
      const paid = { limit: 3, windowMs: 60_000 };
      const app = await build({ limits: (request) => (request.headers.authorization ? paid : free) });
      expect(await statuses(app, '/', 4, { authorization: 'Bearer x' })).toEqual([200, 200, 200, 429]);
    });
  });

  describe('per-route policies', () => {
    function readsAndWrites(app: FastifyInstance): void {
      app.get('/items', async () => []);
      app.post('/items', { config: { rateLimit: { max: 2, timeWindow: '1 minute' } } }, async () => 'created');
      app.get('/health', { config: { rateLimit: false } }, async () => 'up');
    }

    it('limits reads and writes separately: the write policy is its own count', async () => {
      const app = await build({ max: 5 }, readsAndWrites);
      const post = () => app.inject({ method: 'POST', url: '/items' });
      expect([(await post()).statusCode, (await post()).statusCode, (await post()).statusCode]).toEqual([200, 200, 429]);
      expect(await statuses(app, '/items', 6)).toEqual([200, 200, 200, 200, 200, 429]);
    });

    it('config.rateLimit: false leaves a route unlimited, with no headers', async () => {
      const app = await build({ max: 1 }, readsAndWrites);
      expect(await statuses(app, '/health', 3)).toEqual([200, 200, 200]);
      expect((await app.inject('/health')).headers['x-ratelimit-limit']).toBeUndefined();
    });

    it("merges a route's options over the plugin's (here: the plugin's header format, the route's max)", async () => {
      const app = await build({ max: 100, standardHeaders: 'draft-7' }, (a) => {
        a.get('/', { config: { rateLimit: { max: 1 } } }, async () => 'ok');
      });
      expect((await app.inject('/')).headers.ratelimit).toBe('limit=1, remaining=0, reset=60');
    });

    it('runs a route limiter at the stage named by its hook option', async () => {
      const app = await build({ global: false, max: 1 }, (a) => {
        a.decorateRequest('user', '');
        a.addHook('preValidation', async (request) => {
          (request as unknown as { user: string }).user = String(request.headers['x-user']);
        });
        a.get('/', { config: { rateLimit: { hook: 'preHandler', keyGenerator: (request) => (request as unknown as { user: string }).user } } }, async () => 'ok');
      });
      expect(await statuses(app, '/', 2, { 'x-user': 'ann' })).toEqual([200, 429]);
      expect(await statuses(app, '/', 1, { 'x-user': 'bob' })).toEqual([200]);
    });

    it('works at the preParsing stage, leaving the body intact', async () => {
      const app = await build({ max: 1, hook: 'preParsing' }, (a) => {
        a.post('/echo', async (request) => request.body);
      });
      const first = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
      expect([first.statusCode, first.json()]).toEqual([200, { a: 1 }]);
      expect((await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } })).statusCode).toBe(429);
    });

    it('rejects a bad config.rateLimit when the route is declared, with a coded error', async () => {
      const app = Fastify();
      apps.push(app);
      await app.register(fastifyRateLimit, { now });
      expect(() => app.get('/late', { config: { rateLimit: 'yes' as never } }, async () => 'ok')).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'config.rateLimit' }));
    });

    it.each([
      [{ max: -1 }, 'config.rateLimit.max'],
      [{ global: false }, 'config.rateLimit.global'],
      [{ store: memoryStore() }, 'config.rateLimit.store'],
      [{ cost: -1 }, 'config.rateLimit.cost'],
      [{ storeTimeoutMs: 2 ** 31 }, 'config.rateLimit.storeTimeoutMs'],
    ])('rejects config.rateLimit %j naming `%s`', async (config, option) => {
      const app = Fastify();
      apps.push(app);
      await app.register(fastifyRateLimit, { now });
      expect(() => app.get('/x', { config: { rateLimit: config as never } }, async () => 'ok')).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }));
    });
  });

  it('takes storeTimeoutMs: Infinity (no timeout), as every adapter does', async () => {
    const app = await build({ max: 1, storeTimeoutMs: Number.POSITIVE_INFINITY });
    expect(await statuses(app, '/', 2)).toEqual([200, 429]);
  });

  describe('groupId (@fastify/rate-limit #463)', () => {
    it('routes sharing a groupId share one counter', async () => {
      const app = await build({ global: false }, (a) => {
        a.post('/otp/send', { config: { rateLimit: { max: 2, groupId: 'otp' } } }, async () => 'sent');
        a.post('/otp/resend', { config: { rateLimit: { max: 2, groupId: 'otp' } } }, async () => 'sent');
        a.post('/other', { config: { rateLimit: { max: 2 } } }, async () => 'ok');
      });
      const post = async (url: string) => (await app.inject({ method: 'POST', url })).statusCode;
      expect([await post('/otp/send'), await post('/otp/resend'), await post('/otp/send'), await post('/otp/resend')]).toEqual([200, 200, 429, 429]);
      expect(await post('/other')).toBe(200);
    });

    it('rejects a route whose limits differ from the rest of its group', async () => {
      const app = Fastify();
      apps.push(app);
      await app.register(fastifyRateLimit, { now, global: false });
      app.post('/a', { config: { rateLimit: { max: 2, groupId: 'otp' } } }, async () => 'ok');
      expect(() => app.post('/b', { config: { rateLimit: { max: 3, groupId: 'otp' } } }, async () => 'ok')).toThrow(
        expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'config.rateLimit.groupId', message: expect.stringContaining('POST /a') }),
      );
    });
  });

  describe('allowList', () => {
    it('an array of keys: listed clients pass with no headers and no count', async () => {
      const app = await build({ max: 1, allowList: ['127.0.0.1'] });
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 200]);
      expect((await app.inject('/')).headers['x-ratelimit-limit']).toBeUndefined();
      expect(await statuses(app, '/', 2, { 'x-forwarded-for': '1.2.3.4' })).toEqual([200, 200]); // no trustProxy: still 127.0.0.1
    });

    it('a function of the request and key', async () => {
      const app = await build({ max: 1, allowList: (request) => request.headers['x-internal'] === 'yes' });
      expect(await statuses(app, '/', 2, { 'x-internal': 'yes' })).toEqual([200, 200]);
      expect(await statuses(app, '/', 2)).toEqual([200, 429]);
    });
  });

  describe('keys', () => {
    it('uses request.ip, which honours trustProxy (X-Forwarded-For is never parsed by the plugin)', async () => {
      const app = await build({ max: 1 }, defaultRoutes, { trustProxy: true });
      expect(await statuses(app, '/', 2, { 'x-forwarded-for': '203.0.113.1' })).toEqual([200, 429]);
      expect(await statuses(app, '/', 1, { 'x-forwarded-for': '203.0.113.2' })).toEqual([200]);
    });

    it('groups IPv6 clients by ipv6Subnet', async () => {
      const app = await build({ max: 1, ipv6Subnet: 64 }, defaultRoutes, { trustProxy: true });
      expect(await statuses(app, '/', 1, { 'x-forwarded-for': '2001:db8:1:2::1' })).toEqual([200]);
      expect(await statuses(app, '/', 1, { 'x-forwarded-for': '2001:db8:1:2::ffff' })).toEqual([429]);
      expect(await statuses(app, '/', 1, { 'x-forwarded-for': '2001:db8:1:3::1' })).toEqual([200]);
    });

    it('lets a request through unlimited, with no headers, when keyGenerator returns false (the gate rule)', async () => {
      const app = await build({ max: 1, keyGenerator: (request) => (request.headers['x-internal'] === 'yes' ? false : 'client') });
      expect(await statuses(app, '/', 3, { 'x-internal': 'yes' })).toEqual([200, 200, 200]);
      expect((await app.inject({ url: '/', headers: { 'x-internal': 'yes' } })).headers['x-ratelimit-limit']).toBeUndefined();
      expect(await statuses(app, '/', 2)).toEqual([200, 429]);
    });

    it('counts by a custom keyGenerator', async () => {
      const app = await build({ max: 1, keyGenerator: (request) => String(request.headers['x-api-key']) });
      expect(await statuses(app, '/', 2, { 'x-api-key': 'a' })).toEqual([200, 429]);
      expect(await statuses(app, '/', 1, { 'x-api-key': 'b' })).toEqual([200]);
    });

    it.each([
      [
        'throws',
        () => {
          throw new Error('no session');
        },
      ],
      ['returns nothing', () => undefined],
      [
        'rejects',
        async () => {
          throw new Error('no session');
        },
      ],
    ])('a keyGenerator that %s answers 500 with ERR_RATEKIT_KEY through the error handler, and the app keeps serving', async (_what, broken) => {
      const app = await build({ max: 5, keyGenerator: (request) => (request.headers['x-broken'] ? (broken as unknown as () => string)() : 'fine') }, (a) => {
        a.setErrorHandler((error: { code?: string; message: string }, _request, reply) => {
          reply.code(500).send({ code: error.code, message: error.message });
        });
        a.get('/', async () => 'ok');
      });
      const res = await app.inject({ url: '/', headers: { 'x-broken': '1' } });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({
        code: 'ERR_RATEKIT_KEY',
        // The gate's key rule and message, as every ratekit adapter's.
        message: expect.stringMatching(
          /^\[ratekit\] (The keyGenerator failed: no session|Expected the keyGenerator to return a non-empty string, a finite number, or false to skip limiting, got undefined)$/,
        ),
      });
      expect(await statuses(app, '/', 2)).toEqual([200, 200]);
    });
  });

  describe('headers', () => {
    it("sends @fastify/rate-limit's legacy headers by default, the reset in seconds from now", async () => {
      const app = await build({ max: 3, timeWindow: 10_000 });
      const ok = await app.inject('/');
      expect(ok.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '10' });
      expect(ok.headers['retry-after']).toBeUndefined();
      await statuses(app, '/', 2);
      at(1);
      const refused = await app.inject('/');
      expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9', 'retry-after': '9' });
    });

    it('enableDraftSpec: the RateLimit-Limit/-Remaining/-Reset fields instead', async () => {
      const app = await build({ max: 1, timeWindow: '1 minute', enableDraftSpec: true });
      const ok = await app.inject('/');
      expect(ok.headers).toMatchObject({ 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '60', 'ratelimit-policy': '1;w=60' });
      expect(ok.headers['x-ratelimit-limit']).toBeUndefined();
      const refused = await app.inject('/');
      expect(refused.headers).toMatchObject({ 'ratelimit-reset': '60', 'retry-after': '60' });
    });

    it.each([
      ['draft-6', { 'ratelimit-policy': '2;w=60', 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-reset': '60' }],
      ['draft-7', { 'ratelimit-policy': '2;w=60', ratelimit: 'limit=2, remaining=1, reset=60' }],
      ['draft-8', { 'ratelimit-policy': '"2-in-1min"; q=2; w=60; pk=:MTJjYTE3YjQ5YWYy:', ratelimit: '"2-in-1min"; r=1; t=60' }],
    ] as const)('standardHeaders %s', async (standardHeaders, expected) => {
      const app = await build({ max: 2, standardHeaders });
      const res = await app.inject('/');
      expect(res.headers).toMatchObject(expected);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it('sends both sets with standardHeaders and legacyHeaders: true, and none with both off', async () => {
      const both = await build({ max: 2, standardHeaders: 'draft-7', legacyHeaders: true });
      expect(Object.keys((await both.inject('/')).headers)).toEqual(expect.arrayContaining(['x-ratelimit-limit', 'ratelimit', 'ratelimit-policy']));
      const none = await build({ max: 1, legacyHeaders: false });
      await none.inject('/');
      const refused = await none.inject('/');
      expect(refused.statusCode).toBe(429);
      expect(Object.keys(refused.headers).filter((h) => /ratelimit|retry-after/.test(h))).toEqual([]);
    });

    it('addHeadersOnExceeding and addHeaders switch single headers off', async () => {
      const app = await build({ max: 1, addHeadersOnExceeding: { 'x-ratelimit-reset': false }, addHeaders: { 'retry-after': false, 'x-ratelimit-limit': false } });
      const ok = await app.inject('/');
      expect(ok.headers).toMatchObject({ 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0' });
      expect(ok.headers['x-ratelimit-reset']).toBeUndefined();
      const refused = await app.inject('/');
      expect(refused.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' });
      expect(refused.headers['retry-after']).toBeUndefined();
      expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it("sends exactly the bytes of core's rateLimitHeaders() for the same decision", async () => {
      const limits = [
        { algorithm: 'gcra' as const, limit: 2, windowMs: 1_000, name: 'burst' },
        { limit: 3, windowMs: 60_000, name: 'minute' },
      ];
      const app = await build({ limits, standardHeaders: 'draft-8', legacyHeaders: true });
      const twin = createLimiter({ limits, now });
      for (const s of [0, 0, 0.2, 0.4, 1]) {
        at(s);
        const res = await app.inject('/');
        const expected = rateLimitHeaders(twin.consume('127.0.0.1') as Decision, {
          standardHeaders: 'draft-8',
          legacyHeaders: true,
          legacyReset: 'delta',
          combineLists: true,
          partitionKey: '127.0.0.1',
        });
        const sent = Object.fromEntries(Object.entries(res.headers).filter(([name]) => /ratelimit|retry-after/.test(name)));
        expect(sent).toEqual(Object.fromEntries(expected.map(([name, value]) => [name.toLowerCase(), value])));
      }
    });
  });

  describe('refusals', () => {
    it('throw an error with statusCode 429 that reaches setErrorHandler, before any status is set', async () => {
      let seen: { errorStatus?: number; replyStatus?: number; message?: string } = {};
      const app = await build({ max: 1 }, (a) => {
        a.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
          seen = { errorStatus: error.statusCode, replyStatus: reply.statusCode, message: error.message };
          reply.code(503).send({ slowDown: true });
        });
        a.get('/', async () => 'ok');
      });
      await app.inject('/');
      const res = await app.inject('/');
      expect(seen).toEqual({ errorStatus: 429, replyStatus: 200, message: 'Too many requests, please try again later.' });
      expect([res.statusCode, res.json(), res.headers['retry-after']]).toEqual([503, { slowDown: true }, '60']);
    });

    it('throw an Error without a stack trace, and leave Error.stackTraceLimit as it was', async () => {
      let seen: unknown;
      const app = await build({ max: 1 }, (a) => {
        a.setErrorHandler((error, _request, reply) => {
          seen = error;
          reply.code(429).send('no');
        });
        a.get('/', async () => 'ok');
      });
      const limit = Error.stackTraceLimit;
      await app.inject('/');
      await app.inject('/');
      expect(seen).toBeInstanceOf(Error);
      expect((seen as Error).stack).toBe('Error: Too many requests, please try again later.');
      expect(Error.stackTraceLimit).toBe(limit);
    });

    it("answer Fastify's default error body with core's refusal message", async () => {
      const app = await build({ max: 1 });
      await app.inject('/');
      const res = await app.inject('/');
      expect(res.statusCode).toBe(429);
      expect(res.body).toBe('{"statusCode":429,"error":"Too Many Requests","message":"Too many requests, please try again later."}');
    });

    it('errorResponseBuilder builds what is thrown, from the @fastify/rate-limit context', async () => {
      const contexts: unknown[] = [];
      const app = await build({
        max: 1,
        timeWindow: '1 minute',
        errorResponseBuilder: (_request, context) => {
          contexts.push({ ...context, decision: undefined });
          return { statusCode: 429, error: 'Slow down', message: `retry in ${context.after}` };
        },
      });
      await app.inject('/');
      const res = await app.inject('/');
      expect([res.statusCode, res.json()]).toEqual([429, { statusCode: 429, error: 'Slow down', message: 'retry in 1 minute' }]);
      expect(contexts).toEqual([{ statusCode: 429, ban: false, max: 1, ttl: 60_000, after: '1 minute', key: '127.0.0.1', decision: undefined }]);
    });

    it.each([
      ['a plain object', () => ({ message: 'slow down' })],
      ['an Error', () => new Error('slow down')],
    ])('an errorResponseBuilder result without statusCode (%s) still answers 429, not 500', async (_what, builder) => {
      const app = await build({ max: 1, errorResponseBuilder: builder });
      await app.inject('/');
      const res = await app.inject('/');
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({ message: 'slow down' });
    });

    it('ban: after `ban` refusals in the window, 403 (and onBanReach)', async () => {
      const banned: string[] = [];
      const app = await build({ max: 1, ban: 1, onBanReach: (_request, key) => banned.push(key) });
      expect(await statuses(app, '/', 4)).toEqual([200, 429, 403, 403]);
      expect(banned).toEqual(['127.0.0.1', '127.0.0.1']);
      const res = await app.inject('/');
      expect(res.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    });

    it('continueExceeding: every refused attempt restarts the window', async () => {
      const app = await build({ max: 1, timeWindow: '10 seconds', continueExceeding: true });
      const seen: Array<[number, number, unknown]> = [];
      for (const s of [0, 5, 12, 23]) {
        at(s);
        const res = await app.inject('/');
        seen.push([s, res.statusCode, res.headers['retry-after']]);
      }
      expect(seen).toEqual([
        [0, 200, undefined],
        [5, 429, '10'],
        [12, 429, '10'],
        [23, 200, undefined],
      ]);
    });
  });

  describe('callbacks', () => {
    it('onExceeding runs on every admitted request, onExceeded on every refused one, with the key', async () => {
      const calls: string[] = [];
      const app = await build({ max: 2, onExceeding: (_r, key) => calls.push(`exceeding ${key}`), onExceeded: (_r, key) => calls.push(`exceeded ${key}`) });
      await statuses(app, '/', 3);
      expect(calls).toEqual(['exceeding 127.0.0.1', 'exceeding 127.0.0.1', 'exceeded 127.0.0.1']);
    });
  });

  describe('store failures', () => {
    it('skipOnError lets requests through when the store fails, and logs the failure', async () => {
      const app = await build({ max: 1, skipOnError: true, store: brokenStore });
      const logged = jest.spyOn(app.log, 'error');
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 200]);
      expect(logged).toHaveBeenCalledTimes(3);
    });

    it('without skipOnError, a store failure answers 500 with ERR_RATEKIT_STORE through the error handler', async () => {
      let code: string | undefined;
      const app = await build({ max: 1, store: brokenStore }, (a) => {
        a.setErrorHandler((error: { code?: string }, _request, reply) => {
          code = error.code;
          reply.code(500).send('store down');
        });
        a.get('/', async () => 'ok');
      });
      expect((await app.inject('/')).statusCode).toBe(500);
      expect(code).toBe('ERR_RATEKIT_STORE');
    });

    it("onStoreError: 'deny' refuses while the store is down", async () => {
      const app = await build({ max: 1, store: brokenStore, onStoreError: 'deny' });
      expect(await statuses(app, '/', 1)).toEqual([429]);
    });

    it('storeTimeoutMs bounds a store that never answers', async () => {
      const hanging: RateLimitStore = { ...brokenStore, evaluate: () => new Promise(() => {}) };
      const app = await build({ max: 1, store: hanging, storeTimeoutMs: 20, skipOnError: true });
      jest.spyOn(app.log, 'error').mockImplementation(() => undefined);
      expect(await statuses(app, '/', 1)).toEqual([200]);
    });
  });

  describe('store, cache and nameSpace', () => {
    it('keeps registrations sharing a store apart by nameSpace, and together under the same one', async () => {
      const store = memoryStore({ pruneIntervalMs: 0 });
      const a = await build({ max: 1, store, nameSpace: 'a-' });
      const b = await build({ max: 1, store, nameSpace: 'b-' });
      const a2 = await build({ max: 1, store, nameSpace: 'a-' });
      expect([...(await statuses(a, '/', 1)), ...(await statuses(b, '/', 1)), ...(await statuses(a2, '/', 1))]).toEqual([200, 200, 429]);
    });

    it('bounds the default memory store by cache keys; an evicted key with budget left starts afresh', async () => {
      const app = await build({ max: 2, cache: 1, keyGenerator: (request) => String(request.headers['x-user']) });
      expect(await statuses(app, '/', 1, { 'x-user': 'a' })).toEqual([200]);
      expect(await statuses(app, '/', 1, { 'x-user': 'b' })).toEqual([200]); // evicts a, which had half its budget left
      expect(await statuses(app, '/', 3, { 'x-user': 'a' })).toEqual([200, 200, 429]);
    });

    it('an evicted key that was refused stays refused (the memory store keeps it aside)', async () => {
      const app = await build({ max: 1, cache: 1, keyGenerator: (request) => String(request.headers['x-user']) });
      expect(await statuses(app, '/', 2, { 'x-user': 'a' })).toEqual([200, 429]);
      expect(await statuses(app, '/', 1, { 'x-user': 'b' })).toEqual([200]); // evicts a
      expect(await statuses(app, '/', 1, { 'x-user': 'a' })).toEqual([429]);
    });
  });

  describe('fastify.rateLimit()', () => {
    it('with options: a hook for a route, with its own count', async () => {
      const app = await build({ global: false }, (a) => {
        a.get('/search', { onRequest: a.rateLimit({ max: 2 }) }, async () => 'results');
        a.get('/', async () => 'ok');
      });
      expect(await statuses(app, '/search', 3)).toEqual([200, 200, 429]);
      expect(await statuses(app, '/', 3)).toEqual([200, 200, 200]);
    });

    it('without options: the plugin limiter, sharing its count, counted once on a globally limited route', async () => {
      const app = await build({ max: 3 }, (a) => {
        a.get('/', { onRequest: a.rateLimit() }, async () => 'ok');
        a.get('/other', async () => 'other');
      });
      expect((await app.inject('/')).headers['x-ratelimit-remaining']).toBe('2');
      expect((await app.inject('/other')).headers['x-ratelimit-remaining']).toBe('1');
    });

    it('a second limiter attached to a globally limited route runs too, instead of being skipped silently', async () => {
      const app = await build({ max: 100 }, (a) => {
        a.get('/', { preHandler: a.rateLimit({ max: 1 }) }, async () => 'ok');
      });
      expect(await statuses(app, '/', 2)).toEqual([200, 429]);
    });

    it('limits the not-found handler', async () => {
      const app = await build({ global: false }, (a) => {
        a.setNotFoundHandler({ preHandler: a.rateLimit({ max: 1 }) }, (_request, reply) => {
          reply.code(404).send('nope');
        });
      });
      expect(await statuses(app, '/missing', 2)).toEqual([404, 429]);
    });

    it('called without done, as @fastify/rate-limit types it (an async hook): resolves to go on, rejects with the refusal', async () => {
      const app = await build({ global: false }, (a) => {
        const hook = a.rateLimit({ max: 1 });
        a.get('/', async (request, reply) => {
          try {
            await hook.call(a, request, reply);
            return 'passed';
          } catch (error) {
            return `refused ${(error as { statusCode?: number }).statusCode}`;
          }
        });
      });
      const bodies = [];
      for (let i = 0; i < 2; i++) bodies.push((await app.inject('/')).body);
      expect(bodies).toEqual(['passed', 'refused 429']);
    });
  });

  describe('fastify.createRateLimit()', () => {
    it('checks by hand: counting, or peeking with increment: false, and never answers the request', async () => {
      const app = await build({ global: false }, (a) => {
        const check = a.createRateLimit({ max: 2, ban: 0 });
        a.get('/peek', async (request) => check(request, { increment: false }));
        a.get('/count', async (request) => check(request));
      });
      const peek = async () => (await app.inject('/peek')).json();
      const count = async () => (await app.inject('/count')).json();
      expect(await peek()).toMatchObject({ isAllowed: false, key: '127.0.0.1', max: 2, timeWindow: 60_000, remaining: 2, isExceeded: false, isBanned: false });
      expect(await peek()).toMatchObject({ remaining: 2, isExceeded: false });
      expect(await count()).toMatchObject({ remaining: 1, isExceeded: false });
      expect(await count()).toMatchObject({ remaining: 0, isExceeded: false, ttl: 60_000, ttlInSeconds: 60 });
      expect(await count()).toMatchObject({ remaining: 0, isExceeded: true, isBanned: true });
      expect(await peek()).toMatchObject({ isExceeded: true });
    });

    it('reports an allow-listed key as isAllowed: true', async () => {
      const app = await build({ global: false }, (a) => {
        const check = a.createRateLimit({ allowList: ['127.0.0.1'] });
        a.get('/', async (request) => check(request));
      });
      expect((await app.inject('/')).json()).toEqual({ isAllowed: true, key: '127.0.0.1' });
    });
  });

  describe('routes declared before the plugin finished loading', () => {
    it('get a RATEKIT_FASTIFY_EARLY_ROUTES warning naming them', async () => {
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      const app = Fastify();
      apps.push(app);
      app.register(fastifyRateLimit, { max: 1 }); // not awaited: the classic mistake
      app.get('/early', async () => 'unlimited');
      await app.ready();
      expect(warn).toHaveBeenCalledTimes(1);
      const [message, options] = warn.mock.calls[0] as [string, { code: string }];
      expect(options).toMatchObject({ code: EARLY_ROUTES_WARNING });
      expect(message).toContain('/early (GET, HEAD)');
      expect(await statuses(app, '/early', 2)).toEqual([200, 200]);
    });

    it('no warning when the plugin is registered first', async () => {
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      await build({ max: 1 });
      expect(warn).not.toHaveBeenCalled();
    });
  });

  describe('the delay algorithm', () => {
    it('holds an over-rate request for its delay instead of refusing it', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      try {
        const app = await build({ limits: { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000 } });
        expect((await app.inject('/')).statusCode).toBe(200);
        let answered = false;
        const second = app.inject('/').then((res) => {
          answered = true;
          return res;
        });
        await jest.advanceTimersByTimeAsync(900);
        expect(answered).toBe(false);
        await jest.advanceTimersByTimeAsync(100);
        const res = await second;
        // The gate's header for a held pass, as every ratekit adapter sends it.
        expect([res.statusCode, res.headers['x-slow-down-delay']]).toEqual([200, '1000']);
      } finally {
        jest.useRealTimers();
      }
    });

    it("stops holding a request as soon as its client goes away (the gate's abort-aware hold)", async () => {
      let passes = 0;
      let clientGone = () => {};
      let handled = 0;
      let secondHandled = () => {};
      const second = new Promise<void>((resolve) => (secondHandled = resolve));
      const app = await build(
        {
          limits: { algorithm: 'delay', limit: 1, windowMs: 60_000, maxDelayMs: 600_000 },
          onExceeding: () => {
            if (++passes === 2) clientGone();
          },
        },
        (a) => {
          a.get('/', async () => {
            if (++handled === 2) secondHandled();
            return 'ok';
          });
        },
      );
      expect((await app.inject('/')).statusCode).toBe(200);
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      const client = httpRequest(`${address}/`);
      client.on('error', () => {});
      clientGone = () => client.destroy();
      client.end();
      await second; // held for a minute (the clock is fixed) unless the hold ends when the client leaves
      expect(passes).toBe(2);
    });
  });

  describe('over a real socket', () => {
    it('answers 200 then 429 with the headers, on loopback', async () => {
      const app = await build({ max: 1, timeWindow: '1 minute' });
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      const first = await fetch(`${address}/`);
      const second = await fetch(`${address}/`);
      expect([first.status, first.headers.get('x-ratelimit-remaining')]).toEqual([200, '0']);
      expect([second.status, second.headers.get('retry-after'), await second.json()]).toEqual([
        429,
        '60',
        { statusCode: 429, error: 'Too Many Requests', message: 'Too many requests, please try again later.' },
      ]);
    });
  });
});
