import { memoryStore, RateKitOptionError } from '@ratekit/core';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { rateLimit as erlRateLimit } from 'express-rate-limit';
import request from 'supertest';
import { rateLimit } from '../rate-limit.js';
import { RateKitStore } from './ratekit-store.js';

/** Sat, 21 Nov 2026 12:00:00 GMT; `Date.now()` is faked (only it), for express-rate-limit and the store alike. */
const T0 = 1_795_262_400_000;
beforeEach(() => {
  jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
});
afterEach(() => jest.useRealTimers());

const quiet = { warn: () => undefined, error: () => undefined };

function appWith(limiter: RequestHandler): Express {
  const app = express();
  app.use(limiter);
  app.use((req: Request, res: Response) => {
    res.json((req as Request & { rateLimit?: unknown }).rateLimit);
  });
  app.use(((err, _req, res, _next) => {
    res.status(500).json({ error: (err as Error).message });
  }) as express.ErrorRequestHandler);
  return app;
}

/** Sends a GET at `at` ms after T0; returns status, Retry-After and req.rateLimit's used/remaining. */
async function at(app: Express, ms: number) {
  jest.setSystemTime(T0 + ms);
  const res = await request(app).get('/');
  return { status: res.status, retryAfter: res.headers['retry-after'], used: res.body?.used, remaining: res.body?.remaining };
}

describe('RateKitStore', () => {
  describe('inside the real express-rate-limit', () => {
    it('brings its algorithm: a token bucket of 2 per second refills one token every 500 ms', async () => {
      const app = appWith(erlRateLimit({ windowMs: 1_000, limit: 2, store: new RateKitStore({ algorithm: 'token-bucket' }), logger: quiet }));
      const timeline: Array<[number, number]> = [
        [0, 200],
        [0, 200],
        [0, 429],
        [499, 429],
        [500, 200], // one token back: a fixed window would refuse until 1 000
        [500, 429],
      ];
      const seen: Array<[number, number]> = [];
      for (const [ms] of timeline) seen.push([ms, (await at(app, ms)).status]);
      expect(seen).toEqual(timeline);
    });

    it('reports hits the limiter reads right: used while admitted, limit + 1 when refused, and a Retry-After for when the request would pass', async () => {
      const app = appWith(
        erlRateLimit({
          windowMs: 60_000,
          limit: 2,
          store: new RateKitStore({ algorithm: 'sliding-window' }),
          handler: (req, res) => res.status(429).json((req as Request & { rateLimit?: unknown }).rateLimit),
          logger: quiet,
        }),
      );
      expect(await at(app, 0)).toEqual({ status: 200, retryAfter: undefined, used: 1, remaining: 1 });
      expect(await at(app, 0)).toEqual({ status: 200, retryAfter: undefined, used: 2, remaining: 0 });
      // Refused twice: refusals charge nothing, so `used` stays at limit + 1 instead of rising. The sliding
      // window admits again once the previous window's 2 hits weigh 1: half-way through the next window, at 90 s.
      expect(await at(app, 0)).toEqual({ status: 429, retryAfter: '90', used: 3, remaining: 0 });
      expect(await at(app, 30_000)).toEqual({ status: 429, retryAfter: '60', used: 3, remaining: 0 });
    });

    it('takes refunds through decrement (skipSuccessfulRequests) and answers getKey and resetKey', async () => {
      const limiter = erlRateLimit({ windowMs: 60_000, limit: 1, skipSuccessfulRequests: true, store: new RateKitStore(), logger: quiet });
      const app = appWith(limiter);
      for (let i = 0; i < 3; i++) expect((await at(app, 0)).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await limiter.getKey('127.0.0.1')).toBeUndefined();

      const counting = erlRateLimit({ windowMs: 60_000, limit: 1, store: new RateKitStore(), logger: quiet });
      const other = appWith(counting);
      await at(other, 0);
      expect(await counting.getKey('127.0.0.1')).toEqual({ totalHits: 1, resetTime: new Date(T0 + 60_000) });
      expect((await at(other, 0)).status).toBe(429);
      counting.resetKey('127.0.0.1');
      expect((await at(other, 0)).status).toBe(200);
    });
  });

  describe('inside this package (express-rate-limit mode)', () => {
    it('is an express-rate-limit store, so the limiter stays in express-rate-limit mode and uses it', async () => {
      const limiter = rateLimit({ windowMs: 1_000, limit: 2, store: new RateKitStore({ algorithm: 'gcra' }), logger: quiet });
      const app = appWith(limiter);
      expect(limiter.limiter).toBeUndefined();
      expect([(await at(app, 0)).status, (await at(app, 0)).status, (await at(app, 0)).status, (await at(app, 500)).status]).toEqual([200, 200, 429, 200]);
    });

    it('runs several limits all-or-nothing, on a shared ratekit store kept apart by prefix', async () => {
      const shared = memoryStore();
      const limits = [
        { limit: 2, windowMs: 1_000, name: 'second' },
        { limit: 3, windowMs: 60_000, name: 'minute' },
      ];
      const app = appWith(rateLimit({ limit: 3, store: new RateKitStore({ store: shared, limits, prefix: 'api' }), logger: quiet }));
      const other = appWith(rateLimit({ limit: 3, store: new RateKitStore({ store: shared, limits, prefix: 'web' }), logger: quiet }));
      const statuses = [];
      for (const ms of [0, 0, 0, 1_000, 2_000]) statuses.push((await at(app, ms)).status);
      expect(statuses).toEqual([200, 200, 429, 200, 429]);
      expect((await at(other, 2_000)).status).toBe(200);
      shared.dispose();
    });
  });

  describe('configuration', () => {
    it('reports, through the limiter, an init without a fixed limit, and then fails each request', async () => {
      const errors: unknown[] = [];
      const app = appWith(rateLimit({ limit: () => 5, store: new RateKitStore(), logger: { warn: () => undefined, error: (e) => errors.push(e) } }));
      expect(errors).toEqual([expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'limits' })]);
      expect((await at(app, 0)).status).toBe(500);
    });

    it('takes limits when the limiter’s limit is a function', async () => {
      const app = appWith(rateLimit({ limit: () => 1, store: new RateKitStore({ limits: { limit: 1, windowMs: 1_000 } }), logger: quiet }));
      expect([(await at(app, 0)).status, (await at(app, 0)).status]).toEqual([200, 429]);
    });

    it('declares localKeys for an in-process store and its prefix', () => {
      expect(new RateKitStore({ prefix: 'p' })).toMatchObject({ localKeys: true, prefix: 'p' });
      expect(new RateKitStore({ store: { ...memoryStore(), shared: true } })).toMatchObject({ localKeys: false, prefix: '' });
    });

    it.each([
      ['a store that is not a ratekit store', { store: {} as never }, 'store'],
      ['an invalid limit', { limits: { limit: 0, windowMs: 1 } }, 'limits.limit'],
    ])('throws RateKitOptionError for %s', (_situation, options, option) => {
      expect(() => new RateKitStore(options)).toThrow(RateKitOptionError);
      try {
        new RateKitStore(options);
      } catch (error) {
        expect(error).toMatchObject({ option });
      }
    });
  });
});
