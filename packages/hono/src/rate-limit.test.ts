import { memoryStore, type RateLimitStore } from '@ratekit/core';
import { Hono } from 'hono';
import { rateLimit } from './rate-limit.js';

const T0 = 1_700_000_000_000;
/** A getConnInfo for tests: the connection's address comes from `x-test-socket`. */
const getConnInfo = (c: { req: { header(name: string): string | undefined } }) => ({ remote: { address: c.req.header('x-test-socket') } });
const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { 'x-test-socket': ip, ...extra } });

function appWith(middleware: ReturnType<typeof rateLimit>, routes?: (app: Hono) => void): Hono {
  const app = new Hono();
  app.use(middleware);
  app.get('/', (c) => c.text('ok'));
  app.get('/fail', (c) => c.text('no', 400));
  app.get('/throw', () => {
    throw new Error('boom');
  });
  routes?.(app);
  return app;
}

async function statuses(app: Hono, n: number, init: RequestInit = from('192.0.2.1'), path = '/'): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await app.request(path, init)).status);
  return out;
}

/** A store whose calls never answer. */
function deadStore(): RateLimitStore {
  const live = memoryStore();
  return { ...live, shared: true, evaluate: () => new Promise<never>(() => undefined), resetKey: () => new Promise<never>(() => undefined) };
}

describe('rateLimit (ratekit mode)', () => {
  describe('policies', () => {
    it('checks several limits all-or-nothing: a refusal by one charges none', async () => {
      const mw = rateLimit({
        getConnInfo,
        limits: [
          { limit: 2, windowMs: 1_000 },
          { limit: 3, windowMs: 60_000, name: 'minute' },
        ],
        now: () => T0,
      });
      const app = appWith(mw);
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
      // The refused third request did not charge the minute limit: one left there.
      const peek = await mw.limiter.peek('192.0.2.1');
      expect(peek.limits.find((l) => l.name === 'minute')?.remaining).toBe(1);
    });

    it('charges `cost` per request, from a function of the context', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 10, cost: (c) => (c.req.method === 'POST' ? 5 : 1), now: () => T0 }), (a) => a.post('/', (c) => c.text('made')));
      const post = { method: 'POST', ...from('192.0.2.2') };
      expect((await app.request('/', post)).status).toBe(200);
      expect((await app.request('/', post)).headers.get('ratelimit-remaining')).toBe('0');
      expect((await app.request('/', post)).status).toBe(429);
    });

    it('blocks a key for `blockDurationMs` after a refusal', async () => {
      let t = T0;
      const app = appWith(rateLimit({ getConnInfo, limits: { limit: 1, windowMs: 1_000, blockDurationMs: 10_000 }, now: () => t }));
      expect(await statuses(app, 2)).toEqual([200, 429]);
      t += 2_000; // the window has passed, the block has not
      const res = await app.request('/', from('192.0.2.1'));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('8');
    });

    it('holds a request the delay algorithm admits late for its delayMs, then serves it', async () => {
      // One request per 200 ms, no burst: the second, at the same instant, waits 200 ms.
      const app = appWith(rateLimit({ getConnInfo, limits: { algorithm: 'delay', limit: 1, windowMs: 200, maxDelayMs: 1_000 }, now: () => T0 }));
      expect((await app.request('/', from('192.0.2.20'))).status).toBe(200);
      const started = performance.now();
      expect((await app.request('/', from('192.0.2.20'))).status).toBe(200);
      // A timer never fires early by more than its 1 ms rounding: 195 ms leaves that margin.
      expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    });

    it('stops holding a delayed request once it is aborted (the client left), as @ratekit/fetch does', async () => {
      // The second request would wait 60 s; aborted, it is served without waiting (else the test times out).
      const app = appWith(rateLimit({ getConnInfo, limits: { algorithm: 'delay', limit: 1, windowMs: 60_000, maxDelayMs: 120_000 }, now: () => T0 }));
      expect((await app.request('/', from('192.0.2.21'))).status).toBe(200);
      const aborting = new AbortController();
      const served = app.request('/', { ...from('192.0.2.21'), signal: aborting.signal });
      aborting.abort();
      expect((await served).status).toBe(200);
    });

    it('runs every algorithm', async () => {
      for (const algorithm of ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra'] as const) {
        const app = appWith(rateLimit({ getConnInfo, algorithm, limit: 2, windowMs: 60_000, now: () => T0 }));
        expect([algorithm, await statuses(app, 3)]).toEqual([algorithm, [200, 200, 429]]);
      }
    });
  });

  describe('headers', () => {
    it('sends draft-7 and legacy fields when asked, and Retry-After on refusals', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, windowMs: 30_000, standardHeaders: 'draft-7', legacyHeaders: true, now: () => T0 }));
      const ok = await app.request('/', from('192.0.2.3'));
      expect(ok.headers.get('ratelimit')).toBe('limit=1, remaining=0, reset=30');
      expect(ok.headers.get('ratelimit-policy')).toBe('1;w=30');
      expect(ok.headers.get('x-ratelimit-limit')).toBe('1');
      expect(ok.headers.get('x-ratelimit-reset')).toBe(String(Math.ceil((T0 + 30_000) / 1000)));
      const refused = await app.request('/', from('192.0.2.3'));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('30');
    });

    it('sends only Retry-After, on refusals, with standardHeaders false', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, standardHeaders: false, now: () => T0 }));
      const ok = await app.request('/', from('192.0.2.4'));
      expect([...ok.headers.keys()].filter((n) => n.includes('ratelimit'))).toEqual([]);
      expect((await app.request('/', from('192.0.2.4'))).headers.get('retry-after')).toBe('60');
    });
  });

  describe('refusals', () => {
    it('answers with statusCode and message (an object as JSON, a function of the decision)', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, statusCode: 503, message: (_c, d) => ({ retryInMs: d.retryAfterMs }), now: () => T0 }));
      await app.request('/', from('192.0.2.5'));
      const res = await app.request('/', from('192.0.2.5'));
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ retryInMs: 60_000 });
    });

    it('lets handler answer, after the headers are set', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, handler: (c, d) => c.text(`slow down (${d.remaining} left)`, 429), now: () => T0 }));
      await app.request('/', from('192.0.2.6'));
      const res = await app.request('/', from('192.0.2.6'));
      expect(await res.text()).toBe('slow down (0 left)');
      expect(res.headers.get('retry-after')).toBe('60');
    });

    it('puts the decision on the context as `rateLimit`', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 3, now: () => T0 }), (a) => a.get('/left', (c) => c.text(String((c.get('rateLimit' as never) as { remaining: number }).remaining))));
      expect(await (await app.request('/left', from('192.0.2.7'))).text()).toBe('2');
    });
  });

  describe('keys', () => {
    it('lets skip and a `false` key through uncounted, without headers', async () => {
      const mw = rateLimit({ limit: 1, keyGenerator: (c) => c.req.header('x-user') ?? false, skip: (c) => c.req.path === '/health', now: () => T0 });
      const app = appWith(mw, (a) => a.get('/health', (c) => c.text('up')));
      expect(await statuses(app, 3, { headers: {} })).toEqual([200, 200, 200]);
      expect(await statuses(app, 2, { headers: { 'x-user': 'u1' } }, '/health')).toEqual([200, 200]);
      expect(await statuses(app, 2, { headers: { 'x-user': 'u1' } })).toEqual([200, 429]);
    });

    it('fails the request with ERR_RATEKIT_KEY when keyGenerator throws or returns no key', async () => {
      const errors: unknown[] = [];
      for (const keyGenerator of [
        () => '',
        () => undefined as unknown as string,
        () => {
          throw new Error('no user');
        },
      ]) {
        const app = appWith(rateLimit({ keyGenerator }));
        app.onError((error, c) => {
          errors.push(error);
          return c.text('error', 500);
        });
        expect((await app.request('/')).status).toBe(500);
      }
      expect(errors.map((e) => (e as { code: string }).code)).toEqual(['ERR_RATEKIT_KEY', 'ERR_RATEKIT_KEY', 'ERR_RATEKIT_KEY']);
    });

    it('fails with ERR_RATEKIT_KEY, never a header, when getConnInfo gives no address', async () => {
      const app = appWith(rateLimit({ getConnInfo: () => ({ remote: {} }) }));
      let code: unknown;
      app.onError((error, c) => {
        code = (error as { code?: string }).code;
        return c.text('error', 500);
      });
      expect((await app.request('/', { headers: { 'x-forwarded-for': '1.2.3.4' } })).status).toBe(500);
      expect(code).toBe('ERR_RATEKIT_KEY');
    });

    it('ignores X-Forwarded-For unless trustProxy says the connection is a proxy', async () => {
      const untrusting = appWith(rateLimit({ getConnInfo, limit: 1, now: () => T0 }));
      expect([
        (await untrusting.request('/', from('10.0.0.1', { 'x-forwarded-for': '198.51.100.1' }))).status,
        (await untrusting.request('/', from('10.0.0.1', { 'x-forwarded-for': '198.51.100.2' }))).status,
      ]).toEqual([200, 429]);
      const trusting = appWith(rateLimit({ getConnInfo, limit: 1, trustProxy: 1, now: () => T0 }));
      expect([
        (await trusting.request('/', from('10.0.0.1', { 'x-forwarded-for': '198.51.100.1' }))).status,
        (await trusting.request('/', from('10.0.0.1', { 'x-forwarded-for': '198.51.100.2' }))).status,
      ]).toEqual([200, 200]);
    });

    it('keys IPv6 clients by ipv6Subnet', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, ipv6Subnet: 64, now: () => T0 }));
      expect((await app.request('/', from('2001:db8::1'))).status).toBe(200);
      expect((await app.request('/', from('2001:db8::ffff'))).status).toBe(429); // same /64
      expect((await app.request('/', from('2001:db8:0:1::1'))).status).toBe(200); // next /64
    });
  });

  describe('store failures', () => {
    it('follows onStoreError within storeTimeoutMs: allow, deny, or throw (500)', async () => {
      const reported: string[] = [];
      const onError = (error: { code: string }) => void reported.push(error.code);
      const allow = appWith(rateLimit({ getConnInfo, store: deadStore(), storeTimeoutMs: 50, onStoreError: 'allow', onError }));
      const deny = appWith(rateLimit({ getConnInfo, store: deadStore(), storeTimeoutMs: 50, onStoreError: 'deny', onError }));
      const thrower = appWith(rateLimit({ getConnInfo, store: deadStore(), storeTimeoutMs: 50 }));
      let thrown: unknown;
      thrower.onError((error, c) => {
        thrown = error;
        return c.text('store down', 500);
      });
      const started = Date.now();
      const results = await Promise.all([allow, deny, thrower].map(async (app) => (await app.request('/', from('192.0.2.9'))).status));
      expect(results).toEqual([200, 429, 500]);
      // 50 ms each, run together; 5 s of margin for a busy machine still proves nothing hangs.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(reported).toEqual(['ERR_RATEKIT_STORE', 'ERR_RATEKIT_STORE']);
      expect((thrown as { code: string }).code).toBe('ERR_RATEKIT_STORE');
    });
  });

  describe('after the response', () => {
    it('gives the cost back for failed responses with skipFailedRequests (status ≥ 400 or a throw)', async () => {
      const mw = rateLimit({ getConnInfo, limit: 2, skipFailedRequests: true, now: () => T0 });
      const app = appWith(mw);
      expect(await statuses(app, 3, from('192.0.2.10'), '/fail')).toEqual([400, 400, 400]);
      expect(await statuses(app, 3, from('192.0.2.10'), '/throw')).toEqual([500, 500, 500]);
      expect(await statuses(app, 3, from('192.0.2.10'))).toEqual([200, 200, 429]);
    });

    it('gives the cost back for successes with skipSuccessfulRequests', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, skipSuccessfulRequests: true, now: () => T0 }));
      expect(await statuses(app, 3, from('192.0.2.11'))).toEqual([200, 200, 200]);
      expect(await statuses(app, 2, from('192.0.2.11'), '/fail')).toEqual([400, 429]);
    });

    it("hands the refund and onDecision's work to c.executionCtx.waitUntil when the runtime gives one", async () => {
      const handed: Promise<unknown>[] = [];
      const seen: boolean[] = [];
      const executionCtx = { waitUntil: (p: Promise<unknown>) => void handed.push(p), passThroughOnException: () => undefined, props: {} };
      const mw = rateLimit({ getConnInfo, limit: 1, skipSuccessfulRequests: true, onDecision: async (d) => void seen.push(d.allowed), now: () => T0 });
      const app = appWith(mw);
      const res = await app.request('/', from('192.0.2.12'), undefined, executionCtx);
      expect(res.status).toBe(200);
      expect(handed).toHaveLength(2); // onDecision, then the refund
      await Promise.all(handed);
      expect(seen).toEqual([true]);
      expect((await mw.limiter.peek('192.0.2.12')).remaining).toBe(1);
    });

    it('awaits background work where there is no executionCtx, and reports its failure to onError', async () => {
      const errors: string[] = [];
      const app = appWith(
        rateLimit({
          getConnInfo,
          onDecision: () => Promise.reject(new Error('metrics down')),
          onError: (e) => void errors.push(e.message),
          now: () => T0,
        }),
      );
      expect((await app.request('/', from('192.0.2.13'))).status).toBe(200);
      expect(errors).toEqual(['[ratekit] background work failed: metrics down']);
    });
  });

  describe('options', () => {
    it.each([
      [{}, 'getConnInfo'],
      [{ getConnInfo, limit: 0 }, 'limit'],
      [{ getConnInfo, windowMs: -1 }, 'windowMs'],
      [{ getConnInfo, algorithm: 'leaky' }, 'algorithm'],
      [{ getConnInfo, trustProxy: true }, 'trustProxy'],
      [{ getConnInfo, ipv6Subnet: 129 }, 'ipv6Subnet'],
      [{ getConnInfo, statusCode: 200 }, 'statusCode'],
      [{ getConnInfo, standardHeaders: 'draft-5' }, 'standardHeaders'],
      [{ keyGenerator: () => 'k', getConnInfo }, 'getConnInfo'],
      [{ getConnInfo, max: 5 }, 'max'],
      [{ getConnInfo, limits: { limit: 1, windowMs: 1 }, limit: 2 }, 'limit'],
      [{ getConnInfo, store: {} }, 'store'],
    ])('refuses %j when built, naming `%s`', (options, name) => {
      expect(() => rateLimit(options as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', message: expect.stringContaining(`\`${name}\``) }));
    });
  });
});
