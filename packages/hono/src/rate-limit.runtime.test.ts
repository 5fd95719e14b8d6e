/**
 * @ratekit/hono with the memory store, on every runtime: jest runs this file
 * on Node, the runtime matrix (scripts/runtimes) on Bun, Deno and workerd,
 * against the built package. Requests go through `app.request()`, so no
 * server is needed; Cloudflare's `getConnInfo` (`cf-connecting-ip`) gives
 * the default key, which needs nothing of the runtime.
 */
import { MemoryStore, rateLimit, rateLimiter } from '@ratekit/hono';
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';

const T0 = 1_700_000_000_000;

function appWith(middleware: Parameters<Hono['use']>[1]): Hono {
  const app = new Hono();
  app.use(middleware);
  app.get('/', (c) => c.text('ok'));
  app.post('/items', (c) => c.text('created', 201));
  return app;
}

const from = (ip: string) => ({ headers: { 'cf-connecting-ip': ip } });

describe('@ratekit/hono on this runtime', () => {
  describe('rateLimit (ratekit mode) with the memory store', () => {
    it('admits `limit` requests per client IP, then refuses with 429, Retry-After and the draft-6 fields', async () => {
      let t = T0;
      const app = appWith(rateLimit({ getConnInfo, limit: 2, windowMs: 60_000, now: () => t }));
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.request('/', from('203.0.113.7'))).status);
      expect(statuses).toEqual([200, 200, 429]);
      const refused = await app.request('/', from('203.0.113.7'));
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('ratelimit-limit')).toBe('2');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      expect(await refused.text()).toBe('Too many requests, please try again later.');
      // Another client has its own budget; the first is admitted again once the window has passed.
      expect((await app.request('/', from('203.0.113.8'))).status).toBe(200);
      t += 60_000;
      expect((await app.request('/', from('203.0.113.7'))).status).toBe(200);
    });

    it('groups IPv6 clients by /56: two addresses of one /56 share a budget', async () => {
      const app = appWith(rateLimit({ getConnInfo, limit: 1, now: () => T0 }));
      expect((await app.request('/', from('2001:db8:1234:5601::1'))).status).toBe(200);
      expect((await app.request('/', from('2001:db8:1234:56ff::2'))).status).toBe(429);
      expect((await app.request('/', from('2001:db8:1234:5700::1'))).status).toBe(200);
    });

    it('sends draft-8 fields, one list member per stacked middleware, with a token bucket and a fixed window', async () => {
      const app = new Hono();
      app.use(rateLimit({ getConnInfo, algorithm: 'token-bucket', limit: 5, windowMs: 10_000, standardHeaders: 'draft-8', now: () => T0 }));
      app.use(rateLimit({ getConnInfo, limit: 100, windowMs: 3_600_000, standardHeaders: 'draft-8', prefix: 'hourly', now: () => T0 }));
      app.get('/', (c) => c.text('ok'));
      const res = await app.request('/', from('198.51.100.1'));
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBe('"5-in-10sec"; r=4; t=2, "100-in-1hr"; r=99; t=3600');
      // Each policy carries the key, hashed, as `pk` (the same key: the same hash).
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"5-in-10sec"; q=5; w=10; pk=(:[\w+/=]+:), "100-in-1hr"; q=100; w=3600; pk=\1$/);
    });
  });

  describe('rateLimiter (the hono-rate-limiter drop-in) with its MemoryStore', () => {
    it('counts per keyGenerator key and refuses the request over `limit`, with its defaults', async () => {
      const store = new MemoryStore();
      const app = appWith(rateLimiter({ keyGenerator: (c) => c.req.header('x-api-key') ?? '', limit: 1, store }));
      const first = await app.request('/', { headers: { 'x-api-key': 'a' } });
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-policy')).toBe('1;w=60');
      const second = await app.request('/', { headers: { 'x-api-key': 'a' } });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('60');
      expect(await second.text()).toBe('Too many requests, please try again later.');
      expect((await app.request('/', { headers: { 'x-api-key': 'b' } })).status).toBe(200);
      expect(store.get('a')?.totalHits).toBe(2);
    });
  });
});
