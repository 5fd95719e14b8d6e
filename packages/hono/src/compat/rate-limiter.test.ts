import { Hono } from 'hono';
import { rateLimiter } from './rate-limiter.js';
import type { Store } from './types.js';

const keyGenerator = () => 'client';

function appWith(middleware: ReturnType<typeof rateLimiter>): Hono {
  const app = new Hono();
  app.use(middleware);
  app.get('/', (c) => c.text('ok'));
  return app;
}

describe('rateLimiter (hono-rate-limiter 0.5.4 drop-in)', () => {
  describe('building', () => {
    it('leaves the options object as given', () => {
      const options = { keyGenerator, limit: 3 };
      rateLimiter(options);
      expect(options).toStrictEqual({ keyGenerator, limit: 3 });
    });

    it('refuses a missing keyGenerator when built (upstream failed every request instead)', () => {
      expect(() => rateLimiter({} as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', message: expect.stringContaining('`keyGenerator`') }));
    });

    it("throws upstream's error for a store without increment", () => {
      expect(() => rateLimiter({ keyGenerator, store: {} as Store })).toThrow('The store is not correctly implemented!');
    });

    it('calls store.init once with the resolved options', () => {
      const seen: unknown[] = [];
      const store: Store = { init: (o) => void seen.push(o.windowMs, o.limit, o.standardHeaders), increment: () => ({ totalHits: 1 }), decrement: () => undefined, resetKey: () => undefined };
      rateLimiter({ keyGenerator, store, windowMs: undefined });
      expect(seen).toEqual([60_000, 5, 'draft-6']);
    });
  });

  describe('a store that does not answer', () => {
    it('fails the request with ERR_RATEKIT_STORE after storeTimeoutMs instead of hanging it', async () => {
      const store: Store = { increment: () => new Promise(() => undefined), decrement: () => undefined, resetKey: () => undefined };
      const app = appWith(rateLimiter({ keyGenerator, store, storeTimeoutMs: 50 }));
      let code: unknown;
      app.onError((error, c) => {
        code = (error as { code?: string }).code;
        return c.text('store down', 500);
      });
      expect((await app.request('/')).status).toBe(500);
      expect(code).toBe('ERR_RATEKIT_STORE');
    });
  });

  describe('Cloudflare Rate Limiting binding mode', () => {
    it("asks binding.limit({ key }) and answers a refusal with upstream's default handler, no headers", async () => {
      const keys: string[] = [];
      let allowed = 1;
      const binding = { limit: ({ key }: { key: string }) => (keys.push(key), { success: allowed-- > 0 }) };
      const app = appWith(rateLimiter({ keyGenerator, binding }));
      expect((await app.request('/')).status).toBe(200);
      const refused = await app.request('/');
      expect(refused.status).toBe(429);
      expect(await refused.text()).toBe('Too many requests, please try again later.');
      expect(refused.headers.get('retry-after')).toBeNull();
      expect(keys).toEqual(['client', 'client']);
    });
  });

  describe('context variables', () => {
    it('puts rateLimit info and the store accessors on the context, under custom names when asked', async () => {
      const app = new Hono();
      app.use(rateLimiter({ keyGenerator, limit: 4, requestPropertyName: 'quota' }));
      app.get('/', async (c) => {
        const info = c.get('quota' as never) as { limit: number; used: number; remaining: number; resetTime: Date };
        const access = c.get('rateLimitStore' as never) as { getKey: (k: string) => { totalHits: number } };
        return c.json({ limit: info.limit, used: info.used, remaining: info.remaining, stored: access.getKey('client').totalHits });
      });
      expect(await (await app.request('/')).json()).toEqual({ limit: 4, used: 1, remaining: 3, stored: 1 });
    });
  });
});
