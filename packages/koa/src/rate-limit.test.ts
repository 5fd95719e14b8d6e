import { type Decision, type EvaluateRequest, type HeaderOptions, memoryStore, resolveHeaderOptions, type StandardHeaders, RateKitError, rateLimitHeaders, type RateLimitStore } from '@ratekit/core';
import Koa from 'koa';
import Koa2 from 'koa2';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ratelimit } from './rate-limit.js';

const T0 = 1_700_000_000_000; // a whole second, so epoch-second resets are exact
let t = T0;
const now = () => t;

/** An app with the given middleware between a recorder and an `ok` handler. */
function harness(App: typeof Koa, ...middleware: Koa.Middleware[]) {
  const app = new App();
  const seen = { decisions: [] as Array<Decision | undefined>, errors: [] as unknown[], handled: 0 };
  app.on('error', (error) => seen.errors.push(error)); // also keeps Koa from logging expected 500s
  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      seen.decisions.push(ctx.state.rateLimit);
    }
  });
  for (const m of middleware) app.use(m);
  app.use((ctx) => {
    seen.handled++;
    ctx.body = 'ok';
  });
  const http = () => request(app.callback());
  return { app, seen, http, get: (path = '/') => http().get(path) };
}

/** What core's header module says for `decision`, joined per name, lower-cased names. */
function coreHeaders(decision: Decision, options: HeaderOptions): Map<string, string> {
  const joined = new Map<string, string>();
  for (const [name, value] of rateLimitHeaders(decision, options)) {
    const lower = name.toLowerCase();
    const previous = joined.get(lower);
    joined.set(lower, previous === undefined ? value : `${previous}, ${value}`);
  }
  return joined;
}

const RATE_HEADER = /ratelimit|retry-after/;

/** The rate-limit headers of a response, lower-cased. */
function rateHeaders(headers: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(headers).filter(([name]) => RATE_HEADER.test(name)));
}

const epochSeconds = (ms: number) => Math.ceil(ms / 1000);

beforeEach(() => {
  t = T0;
});

describe.each([
  ['Koa 2', Koa2],
  ['Koa 3', Koa],
] as const)('ratelimit() on %s', (_version, App) => {
  describe('with the defaults', () => {
    it('limits 2500 per hour per client IP and puts the decision on ctx.state.rateLimit', async () => {
      const { seen, get } = harness(App, ratelimit({ now }));
      const res = await get().expect(200, 'ok');
      expect(seen.decisions[0]).toMatchObject({ allowed: true, limit: 2500, remaining: 2499, resetMs: 3_600_000 });
      expect(res.headers['x-ratelimit-limit']).toBe('2500');
      expect(res.headers['x-ratelimit-remaining']).toBe('2499');
      expect(res.headers['x-ratelimit-reset']).toBe(String(epochSeconds(T0 + 3_600_000)));
    });

    it('keeps state with no db (koa-ratelimit memory driver without db limits nothing)', async () => {
      const { get, seen } = harness(App, ratelimit({ driver: 'memory', max: 1, now }));
      await get().expect(200);
      await get().expect(429);
      expect(seen.handled).toBe(1);
    });

    it('sends only the legacy X-RateLimit-* headers', async () => {
      const { get } = harness(App, ratelimit({ max: 2, duration: 60_000, now }));
      const res = await get().expect(200);
      expect([...rateHeaders(res.headers).keys()].sort()).toEqual(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
    });
  });

  describe('max and duration', () => {
    it('admits max per duration from the first hit, then refuses without calling downstream', async () => {
      const { get, seen } = harness(App, ratelimit({ max: 2, duration: 60_000, now }));
      // time (ms after T0) | status | X-RateLimit-Remaining
      const timeline: Array<[number, number, string]> = [
        [0, 200, '1'],
        [1_000, 200, '0'],
        [59_999, 429, '0'],
        [60_000, 200, '1'], // the window started at the first hit, so it ends at 60 000
      ];
      for (const [at, status, remaining] of timeline) {
        t = T0 + at;
        const res = await get().expect(status);
        expect(res.headers['x-ratelimit-remaining']).toBe(remaining);
      }
      expect(seen.handled).toBe(3);
    });

    it('sends whole epoch seconds in X-RateLimit-Reset (koa-ratelimit sends a fraction)', async () => {
      t = T0 + 250;
      const { get } = harness(App, ratelimit({ max: 2, duration: 60_000, now }));
      const res = await get().expect(200);
      expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
      expect(Math.abs(Number(res.headers['x-ratelimit-reset']) - (T0 + 250 + 60_000) / 1000)).toBeLessThan(1);
    });
  });

  describe('a refusal', () => {
    it("answers 429 with core's default message (the same bytes as every ratekit adapter) and Retry-After in whole seconds", async () => {
      const { get } = harness(App, ratelimit({ max: 1, duration: 60_000, now }));
      await get().expect(200);
      const res = await get().expect(429);
      expect(res.text).toBe('Too many requests, please try again later.');
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
    });

    it('rounds Retry-After up, so it is never 0 (koa-ratelimit truncates)', async () => {
      const { get } = harness(App, ratelimit({ max: 1, duration: 60_000, now }));
      await get().expect(200);
      t = T0 + 59_500;
      const res = await get().expect(429);
      expect(res.headers['retry-after']).toBe('1');
    });

    it('puts the refusal on ctx.state.rateLimit', async () => {
      const { get, seen } = harness(App, ratelimit({ max: 1, duration: 60_000, now }));
      await get();
      await get().expect(429);
      expect(seen.decisions[1]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 60_000 });
    });
  });

  describe('driver and db', () => {
    it('keeps state in the bounded store, not in the Map, and middlewares sharing a Map share counters', async () => {
      const db = new Map();
      const { get } = harness(App, async (ctx, next) => (ctx.path === '/a' ? a(ctx, next) : b(ctx, next)));
      const a = ratelimit({ driver: 'memory', db, max: 2, now });
      const b = ratelimit({ driver: 'memory', db, max: 2, now });
      await get('/a').expect(200);
      await get('/b').expect(200);
      await get('/a').expect(429);
      expect(db.size).toBe(0);
    });

    it('keeps middlewares on one Map apart when their namespaces differ', async () => {
      const db = new Map();
      const a = ratelimit({ db, max: 1, namespace: 'a', now });
      const b = ratelimit({ db, max: 1, namespace: 'b', now });
      const { get } = harness(App, async (ctx, next) => (ctx.path === '/a' ? a(ctx, next) : b(ctx, next)));
      await get('/a').expect(200);
      await get('/b').expect(200);
      await get('/a').expect(429);
    });
  });

  describe('id', () => {
    it('counts each key apart', async () => {
      const { http } = harness(App, ratelimit({ max: 1, id: (ctx) => ctx.get('x-user'), now }));
      await http().get('/').set('x-user', 'ann').expect(200);
      await http().get('/').set('x-user', 'bob').expect(200);
      await http().get('/').set('x-user', 'ann').expect(429);
    });

    it('lets the request through unlimited, uncounted and without headers when it returns false', async () => {
      const { get, seen } = harness(App, ratelimit({ max: 1, id: () => false, now }));
      const res = await get().expect(200);
      await get().expect(200);
      expect(rateHeaders(res.headers).size).toBe(0);
      expect(seen.decisions).toEqual([undefined, undefined]);
    });

    it('accepts a Promise and a number', async () => {
      const { get } = harness(App, ratelimit({ max: 1, id: async () => 42, now }));
      await get().expect(200);
      await get().expect(429);
    });

    it('uses ctx.ip, so X-Forwarded-For counts only when app.proxy is set', async () => {
      const limit = ratelimit({ max: 1, now });
      const trusted = harness(App, limit);
      trusted.app.proxy = true;
      await trusted.http().get('/').set('X-Forwarded-For', '203.0.113.1').expect(200);
      await trusted.http().get('/').set('X-Forwarded-For', '203.0.113.2').expect(200);
      await trusted.http().get('/').set('X-Forwarded-For', '203.0.113.1').expect(429);

      const untrusted = harness(App, ratelimit({ max: 1, now }));
      await untrusted.http().get('/').set('X-Forwarded-For', '203.0.113.1').expect(200);
      await untrusted.http().get('/').set('X-Forwarded-For', '203.0.113.2').expect(429);
    });

    describe('when it throws', () => {
      it('fails the request with ERR_RATEKIT_KEY (500) and serves the next request', async () => {
        let calls = 0;
        const { get, seen } = harness(
          App,
          ratelimit({
            max: 5,
            now,
            id: () => {
              if (++calls === 1) throw new Error('session store down');
              return 'ann';
            },
          }),
        );
        await get().expect(500);
        expect(seen.errors[0]).toBeInstanceOf(RateKitError);
        expect(seen.errors[0]).toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('The `id(ctx)` failed: session store down') });
        expect((seen.errors[0] as Error).cause).toEqual(new Error('session store down'));
        await get().expect(200);
        expect(seen.handled).toBe(1);
      });
    });

    describe.each([
      ['undefined', undefined, 'got undefined'],
      ['an empty string', '', 'got ""'],
      ['null', null, 'got null'],
      ['true', true, 'got true'],
    ])('when it returns %s', (_name, value, got) => {
      it('fails the request with ERR_RATEKIT_KEY (500) and serves the next request', async () => {
        let calls = 0;
        const { get, seen } = harness(App, ratelimit({ max: 5, now, id: () => (++calls === 1 ? (value as never) : 'ann') }));
        await get().expect(500);
        expect(seen.errors[0]).toMatchObject({
          code: 'ERR_RATEKIT_KEY',
          message: expect.stringContaining(`Expected the \`id(ctx)\` to return a non-empty string, a finite number, or false to skip limiting, ${got}`),
        });
        await get().expect(200);
      });
    });
  });

  describe('whitelist', () => {
    it('passes listed requests uncounted and without headers; may be async', async () => {
      const { http, seen } = harness(App, ratelimit({ max: 1, now, whitelist: async (ctx) => ctx.get('x-admin') === 'yes' }));
      for (let i = 0; i < 3; i++) {
        const res = await http().get('/').set('x-admin', 'yes').expect(200);
        expect(rateHeaders(res.headers).size).toBe(0);
      }
      await http().get('/').expect(200); // the first counted request
      await http().get('/').expect(429);
      expect(seen.decisions.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    });
  });

  describe('blacklist', () => {
    it('refuses listed requests with 403 Forbidden, before whitelist and id', async () => {
      const { http, seen } = harness(App, ratelimit({ max: 100, now, blacklist: (ctx) => ctx.get('x-bad') === '1', whitelist: () => true, id: () => false }));
      await http().get('/').set('x-bad', '1').expect(403, 'Forbidden');
      await http().get('/').expect(200);
      expect(seen.handled).toBe(1);
    });
  });

  describe('headers (custom names)', () => {
    it('renames the legacy headers, each on its own', async () => {
      const { get } = harness(App, ratelimit({ max: 1, duration: 60_000, now, headers: { remaining: 'Rate-Remaining', total: 'Rate-Total' } }));
      const res = await get().expect(200);
      expect(res.headers['rate-remaining']).toBe('0');
      expect(res.headers['rate-total']).toBe('1');
      expect(res.headers['x-ratelimit-reset']).toBe(String(epochSeconds(T0 + 60_000)));
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    });
  });

  describe('disableHeader', () => {
    it('sends no X-RateLimit-* headers, but still Retry-After on a refusal', async () => {
      const { get } = harness(App, ratelimit({ max: 1, duration: 60_000, now, disableHeader: true }));
      const ok = await get().expect(200);
      expect(rateHeaders(ok.headers).size).toBe(0);
      const refused = await get().expect(429);
      expect([...rateHeaders(refused.headers)]).toEqual([['retry-after', '60']]);
    });
  });

  describe('errorMessage', () => {
    it('sends a string as text', async () => {
      const { get } = harness(App, ratelimit({ max: 1, now, errorMessage: 'Slow down.' }));
      await get();
      const res = await get().expect(429, 'Slow down.');
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
    });

    it('sends an object as JSON', async () => {
      const { get } = harness(App, ratelimit({ max: 1, now, errorMessage: { error: 'rate_limited' } }));
      await get();
      await get().expect(429, { error: 'rate_limited' });
    });

    it('calls a function with the context and the decision', async () => {
      const { get } = harness(App, ratelimit({ max: 1, duration: 10_000, now, errorMessage: (ctx, d) => ({ path: ctx.path, retryAfterMs: d.retryAfterMs }) }));
      await get('/x');
      await get('/x').expect(429, { path: '/x', retryAfterMs: 10_000 });
    });
  });

  describe('status', () => {
    it('answers refusals with the given status', async () => {
      const { get } = harness(App, ratelimit({ max: 1, now, status: 503 }));
      await get();
      await get().expect(503);
    });
  });

  describe('throw', () => {
    it("throws an HTTP error that carries the rate-limit headers and Retry-After, for the app's error middleware", async () => {
      const caught: Array<{ status: number; message: string; headers: Record<string, string>; expose: boolean }> = [];
      const app = new App();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          caught.push(error as never);
          ctx.status = 418;
          ctx.body = 'handled';
        }
      });
      app.use(ratelimit({ max: 1, duration: 60_000, now, throw: true }));
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      await request(app.callback()).get('/').expect(200);
      await request(app.callback()).get('/').expect(418, 'handled');
      expect(caught).toHaveLength(1);
      expect(caught[0]).toMatchObject({ status: 429, expose: true, message: 'Too many requests, please try again later.' });
      expect(caught[0]!.headers).toEqual({
        'X-RateLimit-Limit': '1',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(epochSeconds(T0 + 60_000)),
        'Retry-After': '60',
      });
    });

    it("keeps the headers through Koa's default error handler", async () => {
      const { get, seen } = harness(App, ratelimit({ max: 1, duration: 60_000, now, throw: true }));
      await get().expect(200);
      const res = await get().expect(429, 'Too many requests, please try again later.');
      expect(res.headers['retry-after']).toBe('60');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(seen.handled).toBe(1);
    });

    it('puts an object errorMessage on the error as body', async () => {
      const caught: unknown[] = [];
      const { get, app } = harness(App, ratelimit({ max: 1, now, throw: true, errorMessage: { error: 'rate_limited' } }));
      app.on('error', (error) => caught.push(error));
      await get();
      await get().expect(429);
      expect(caught).toEqual([expect.objectContaining({ status: 429, body: { error: 'rate_limited' } })]);
    });
  });

  describe('onLimited', () => {
    it('is called on refusals only, after status and body are set, and may change the response', async () => {
      const calls: Array<{ status: number; body: unknown; allowed: boolean }> = [];
      const { get } = harness(
        App,
        ratelimit({
          max: 1,
          duration: 60_000,
          now,
          onLimited: async (ctx, decision) => {
            calls.push({ status: ctx.status, body: ctx.body, allowed: decision.allowed });
            ctx.body = 'custom';
          },
        }),
      );
      await get().expect(200);
      await get().expect(429, 'custom');
      expect(calls).toEqual([{ status: 429, body: 'Too many requests, please try again later.', allowed: false }]);
    });

    it('is called before the throw in throw mode', async () => {
      const calls: number[] = [];
      const { get } = harness(App, ratelimit({ max: 1, now, throw: true, onLimited: (ctx) => void calls.push(ctx.status) }));
      await get();
      await get().expect(429);
      expect(calls).toEqual([429]);
    });
  });

  describe('algorithm', () => {
    it('applies the chosen algorithm to max per duration', async () => {
      const { get } = harness(App, ratelimit({ algorithm: 'gcra', max: 2, duration: 1_000, now }));
      // gcra, 2 per second, bursts of 2: one unit comes back every 500 ms
      const timeline: Array<[number, number]> = [
        [0, 200],
        [0, 200],
        [0, 429],
        [499, 429],
        [500, 200],
        [500, 429],
      ];
      for (const [at, status] of timeline) {
        t = T0 + at;
        await get().expect(status);
      }
    });

    it("holds a request for the delay algorithm's delayMs before calling downstream", async () => {
      const { get, seen } = harness(App, ratelimit({ algorithm: 'delay', max: 1, duration: 80, now }));
      await get().expect(200);
      const started = performance.now();
      await get().expect(200);
      expect(seen.decisions[1]).toMatchObject({ allowed: true, delayMs: 80 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(79);
    });

    it('lets a held request go, without calling downstream, as soon as the client disconnects', async () => {
      // The limiter reads the clock once per decision: two reads, and the second request is being held.
      let decisions = 0;
      const clock = () => (decisions++, t);
      const { app, seen } = harness(App, ratelimit({ algorithm: 'delay', max: 1, duration: 60_000, now: clock }));
      const callback = app.callback();
      const server = createServer((req, res) => void callback(req, res));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
        const aborting = new AbortController();
        const held = fetch(`http://127.0.0.1:${port}/`, { signal: aborting.signal }).catch(() => 'aborted');
        // Wait until the second request's decision (a 60 s hold) is made, then leave.
        while (decisions < 2) await new Promise((resolve) => setImmediate(resolve));
        aborting.abort();
        expect(await held).toBe('aborted');
        // Without the abort-aware hold the middleware would wait 60 s: the test's timeout fails it.
        while (seen.decisions.length < 2) await new Promise((resolve) => setImmediate(resolve));
        expect(seen.decisions[1]).toMatchObject({ allowed: true, delayMs: 60_000 });
        expect(seen.handled).toBe(1);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('limits (several, all-or-nothing)', () => {
    it('refuses when any limit refuses, charges none of them, and reports the binding one', async () => {
      const { get, seen } = harness(
        App,
        ratelimit({
          now,
          limits: [
            { limit: 2, windowMs: 1_000, name: 'second' },
            { limit: 3, windowMs: 60_000, name: 'minute' },
          ],
        }),
      );
      await get().expect(200);
      await get().expect(200);
      await get().expect(429);
      expect(seen.decisions[2]).toMatchObject({ allowed: false, policy: 'second' });
      expect(seen.decisions[2]!.limits[1]).toMatchObject({ name: 'minute', remaining: 1, tokensPaid: 0 });
      t = T0 + 1_000;
      await get().expect(200);
      await get().expect(429);
      expect(seen.decisions[4]).toMatchObject({ allowed: false, policy: 'minute' });
    });
  });

  describe('cost', () => {
    it('charges a fixed cost per request', async () => {
      const { get, seen } = harness(App, ratelimit({ max: 5, cost: 2, now }));
      await get().expect(200);
      await get().expect(200);
      await get().expect(429);
      expect(seen.decisions[2]).toMatchObject({ remaining: 1, cost: 2 });
    });

    it('charges a cost chosen per request', async () => {
      const { http } = harness(App, ratelimit({ max: 5, cost: (ctx) => (ctx.method === 'POST' ? 5 : 1), now }));
      await http().get('/').expect(200);
      await http().post('/').expect(429); // 4 left, a POST costs 5
      await http().get('/').expect(200);
    });
  });

  describe('per-route policies', () => {
    const READ = { limit: 3, windowMs: 60_000, name: 'read' };
    const WRITE = { limit: 1, windowMs: 60_000, name: 'write' };

    it('chooses limits per request with a function of ctx, each with its own counter', async () => {
      const { http } = harness(App, ratelimit({ now, limits: (ctx) => (ctx.method === 'GET' ? READ : WRITE) }));
      await http().post('/items').expect(200);
      await http().post('/items').expect(429);
      await http().get('/items').expect(200);
      await http().get('/items').expect(200);
      await http().get('/items').expect(200);
      await http().get('/items').expect(429);
    });

    it('mounts a stricter middleware on one path beside a global one; both count', async () => {
      const global = ratelimit({ max: 3, namespace: 'global', now });
      const admin = ratelimit({ max: 1, namespace: 'admin', now });
      const { get } = harness(App, global, (ctx, next) => (ctx.path.startsWith('/admin') ? admin(ctx, next) : next()));
      await get('/admin').expect(200);
      await get('/admin').expect(429);
      await get('/').expect(200);
      await get('/').expect(429); // the global budget of 3 was spent by all three requests
    });

    it('lists both policies in draft-8 RateLimit fields when stacked', async () => {
      const global = ratelimit({ max: 3, duration: 60_000, namespace: 'global', standardHeaders: 'draft-8', legacyHeaders: false, now });
      const admin = ratelimit({ max: 1, duration: 60_000, namespace: 'admin', standardHeaders: 'draft-8', legacyHeaders: false, now });
      const { get } = harness(App, global, admin);
      const res = await get().expect(200);
      expect(res.headers['ratelimit']).toMatch(/^"3-in-1min";\s*r=2;\s*t=60, "1-in-1min";\s*r=0;\s*t=60$/);
      expect(res.headers['ratelimit-policy']).toMatch(/^"3-in-1min";\s*q=3;\s*w=60;\s*pk=:\S+:, "1-in-1min";\s*q=1;\s*w=60;\s*pk=:\S+:$/);
    });
  });

  describe('header formats', () => {
    type Format = { standardHeaders?: StandardHeaders | true; legacyHeaders?: boolean };

    /** Two requests (200, then 429) against max 1 per minute in a format; checks both carry exactly core's headers. */
    async function exchange(format: Format) {
      const { get, seen } = harness(App, ratelimit({ max: 1, duration: 60_000, id: () => '127.0.0.1', now, ...format }));
      const ok = await get().expect(200);
      const refused = await get().expect(429);
      const [first, second] = seen.decisions as [Decision, Decision];
      const options = resolveHeaderOptions({ ...format, retryAfter: true, combineLists: true });
      const core = { ...options, partitionKey: '127.0.0.1' }; // pk appears only in draft-8+ output
      expect(rateHeaders(ok.headers)).toEqual(coreHeaders(first, core));
      expect(rateHeaders(refused.headers)).toEqual(coreHeaders(second, core));
      return { ok: ok.headers, refused: refused.headers };
    }

    it('legacy (the default): X-RateLimit-Limit/-Remaining/-Reset, reset in epoch seconds', async () => {
      const { ok, refused } = await exchange({});
      expect(ok['x-ratelimit-limit']).toBe('1');
      expect(ok['x-ratelimit-remaining']).toBe('0');
      expect(ok['x-ratelimit-reset']).toBe(String(epochSeconds(T0 + 60_000)));
      expect(refused['retry-after']).toBe('60');
    });

    it.each(['draft-6', true] as const)('%s: RateLimit-Limit/-Remaining/-Reset and RateLimit-Policy', async (standardHeaders) => {
      const { ok, refused } = await exchange({ standardHeaders, legacyHeaders: false });
      expect(ok['ratelimit-limit']).toBe('1');
      expect(ok['ratelimit-remaining']).toBe('0');
      expect(ok['ratelimit-reset']).toBe('60');
      expect(ok['ratelimit-policy']).toBe('1;w=60');
      expect(ok['x-ratelimit-limit']).toBeUndefined();
      expect(refused['retry-after']).toBe('60');
    });

    it('draft-7: the RateLimit dictionary and RateLimit-Policy', async () => {
      const { ok } = await exchange({ standardHeaders: 'draft-7', legacyHeaders: false });
      expect(ok['ratelimit']).toMatch(/^limit=1,\s*remaining=0,\s*reset=60$/);
      expect(ok['ratelimit-policy']).toBe('1;w=60');
    });

    it.each(['draft-8', 'draft-11'] as const)('%s: RateLimit and RateLimit-Policy lists of named policies, the key hashed as pk', async (standardHeaders) => {
      const { ok, refused } = await exchange({ standardHeaders });
      expect(ok['ratelimit']).toMatch(/^"1-in-1min";\s*r=0;\s*t=60$/);
      // pk: base64 of the first 12 hex digits of sha256('127.0.0.1'), as express-rate-limit sends it
      expect(ok['ratelimit-policy']).toMatch(/^"1-in-1min";\s*q=1;\s*w=60;\s*pk=:MTJjYTE3YjQ5YWYy:$/);
      expect(ok['x-ratelimit-limit']).toBe('1');
      expect(refused['retry-after']).toBe('60');
    });
  });

  describe('store', () => {
    /** A store answering through Promises, as remote stores do. */
    function asyncStore(inner = memoryStore()): RateLimitStore & { calls: EvaluateRequest[] } {
      const calls: EvaluateRequest[] = [];
      return {
        name: 'async-memory',
        shared: true,
        clock: 'caller',
        calls,
        evaluate: async (req) => {
          calls.push(req);
          return inner.evaluate(req);
        },
        resetKey: async (key, namespace) => inner.resetKey(key, namespace),
      };
    }

    it('refuses `store: null` when built, with a RateKitOptionError naming `store`', () => {
      expect(() => ratelimit({ store: null as unknown as RateLimitStore, max: 1 })).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'store' }));
    });

    it('works with an asynchronous store, under the namespace', async () => {
      const store = asyncStore();
      const { get } = harness(App, ratelimit({ store, max: 1, now, namespace: 'api', id: () => 'k' }));
      await get().expect(200);
      await get().expect(429);
      expect(store.calls[0]).toMatchObject({ key: 'k', namespace: 'api', cost: 1, mode: 'consume', nowMs: T0 });
    });

    function failingStore(): RateLimitStore {
      return {
        name: 'broken',
        shared: true,
        clock: 'caller',
        evaluate: () => Promise.reject(new Error('connection refused')),
        resetKey: () => undefined,
      };
    }

    it("fails the request with ERR_RATEKIT_STORE under onStoreError 'throw' (the default), then serves again", async () => {
      const inner = memoryStore();
      let broken = true;
      const store: RateLimitStore = { ...failingStore(), evaluate: (req) => (broken ? Promise.reject(new Error('connection refused')) : inner.evaluate(req)) };
      const { get, seen } = harness(App, ratelimit({ store, max: 5, now }));
      await get().expect(500);
      expect(seen.errors[0]).toMatchObject({ code: 'ERR_RATEKIT_STORE' });
      broken = false;
      await get().expect(200);
    });

    it.each([
      ['allow', 200],
      ['deny', 429],
    ] as const)("answers %s's way under onStoreError '%s'", async (policy, status) => {
      const errors: RateKitError[] = [];
      const { get } = harness(App, ratelimit({ store: failingStore(), max: 5, now, onStoreError: policy, onError: (e) => errors.push(e) }));
      await get().expect(status);
      expect(errors).toEqual([expect.objectContaining({ code: 'ERR_RATEKIT_STORE' })]);
    });

    it('gives up on a store slower than storeTimeoutMs', async () => {
      const store: RateLimitStore = { ...failingStore(), evaluate: () => new Promise<never>(() => {}) };
      const errors: RateKitError[] = [];
      const { get } = harness(App, ratelimit({ store, max: 5, now, storeTimeoutMs: 20, onStoreError: 'allow', onError: (e) => errors.push(e) }));
      await get().expect(200);
      expect(errors[0]?.message).toContain('did not answer within 20 ms');
    });
  });

  describe('limiter and resetKey', () => {
    it('exposes the limiter, and resetKey forgets a key', async () => {
      const limit = ratelimit({ max: 1, id: () => 'ann', now });
      const { get } = harness(App, limit);
      await get().expect(200);
      await get().expect(429);
      expect(limit.limiter.peek('ann')).toMatchObject({ allowed: false });
      await limit.resetKey('ann');
      await get().expect(200);
    });
  });
});

describe('ratelimit()', () => {
  describe('when built with a bad option checked by the core limiter', () => {
    it.each([
      [{ cost: -1 }, 'cost'],
      [{ limits: { limit: 0, windowMs: 1_000 } }, 'limits.limit'],
      [{ limits: [] }, 'limits'],
      [{ store: {} as RateLimitStore }, 'store'],
      [{ onStoreError: 'ignore' as never }, 'onStoreError'],
      [{ storeTimeoutMs: 0 }, 'storeTimeoutMs'],
      [{ now: 5 as never }, 'now'],
    ])('%j throws a RateKitOptionError naming `%s`', (options, option) => {
      expect(() => ratelimit(options)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }));
    });
  });

  it('returns a function named ratelimit whose result is always a promise: passed, refused, or failing', async () => {
    const middleware = ratelimit({ max: 1, id: (ctx) => (ctx.state as { id: string }).id, now });
    const ctx = (id: unknown) => ({ state: { id }, headerSent: false, res: { setHeader: () => {} } }) as unknown as Koa.Context;
    const next = () => Promise.resolve();
    expect(middleware.name).toBe('ratelimit');
    const passed = middleware(ctx('ann'), next);
    const refused = middleware(ctx('ann'), next);
    const failing = middleware(ctx(''), next);
    expect([passed, refused, failing].map((p) => p instanceof Promise)).toEqual([true, true, true]);
    await expect(Promise.all([passed, refused])).resolves.toEqual([undefined, undefined]);
    await expect(failing).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
  });
});
