import { sharedMemoryStore } from '@ratekit/test-utils';
import express from 'express';
import request from 'supertest';
import { RateKitStore } from './compat/ratekit-store.js';
import { rateLimit } from './rate-limit.js';
import type { RateLimitOptions } from './types.js';

const T0 = 1_795_262_400_000;

function appWith(options: Partial<RateLimitOptions>) {
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-8', now: () => T0, ...options }));
  app.get('/', (_req, res) => res.send('ok'));
  return app;
}

describe('refusals answered in-process (refusalCache)', () => {
  it("ratekit mode on a shared store: on by default; a cached refusal has the same status, headers and body as the store's", async () => {
    const store = sharedMemoryStore();
    const app = appWith({ store });
    await request(app).get('/').expect(200);
    const fromStore = await request(app).get('/').expect(429);
    const fromCache = await request(app).get('/').expect(429);
    expect(store.calls).toHaveLength(2);
    const { date: _a, ...storeHeaders } = fromStore.headers;
    const { date: _b, ...cacheHeaders } = fromCache.headers;
    expect(cacheHeaders).toEqual(storeHeaders);
    expect(fromCache.text).toBe(fromStore.text);
    expect(fromCache.headers['retry-after']).toBe('60');
  });

  it('refusalCache: false sends every request to the store', async () => {
    const store = sharedMemoryStore();
    const app = appWith({ store, refusalCache: false });
    for (let i = 0; i < 4; i++) await request(app).get('/');
    expect(store.calls).toHaveLength(4);
  });

  it('refuses a bad refusalCache when the middleware is built, naming it', () => {
    expect(() => appWith({ store: sharedMemoryStore(), refusalCache: { maxKeys: 0 } })).toThrow(
      expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'refusalCache.maxKeys' }) as Error,
    );
  });

  it('RateKitStore (a drop-in express-rate-limit store): off by default, on when asked', async () => {
    for (const [refusalCache, expected] of [
      [undefined, 4],
      [true, 2],
    ] as const) {
      const store = sharedMemoryStore();
      const app = express();
      const ratekit = new RateKitStore({ store, now: () => T0, limits: { limit: 1, windowMs: 60_000 }, ...(refusalCache === undefined ? {} : { refusalCache }) });
      app.use(rateLimit({ windowMs: 60_000, limit: 1, store: ratekit }));
      app.get('/', (_req, res) => res.send('ok'));
      for (let i = 0; i < 4; i++) await request(app).get('/');
      expect(store.calls).toHaveLength(expected);
    }
  });
});

describe('cached refusals on a moving clock, default headers (issue 31 §2: answered synchronously, headers reused while unchanged)', () => {
  it('every answer, status, body and headers, is the one the same app gives with the cache off', async () => {
    const clock = { nowMs: T0 + 0.5 };
    const build = (refusalCache: boolean) => {
      const store = sharedMemoryStore();
      const app = express();
      app.use(rateLimit({ windowMs: 2_000, limit: 2, algorithm: 'fixed-window', store, refusalCache, now: () => clock.nowMs }));
      app.get('/', (_req, res) => res.send('ok'));
      return { app, store };
    };
    const cached = build(true);
    const direct = build(false);
    const answer = async (app: express.Express) => {
      const { status, text, headers } = await request(app).get('/');
      const { date: _date, ...rest } = headers;
      return { status, text, headers: rest };
    };
    for (const dt of [0, 0, 0, 1, 10, 300, 500, 189, 1, 999, 1, 0, 0, 750, 1_249, 2, 5_000, 0, 0, 0, 1_000.25]) {
      clock.nowMs += dt;
      expect(await answer(cached.app)).toEqual(await answer(direct.app));
    }
    expect(cached.store.calls.length).toBeLessThan(direct.store.calls.length);
  });
});
