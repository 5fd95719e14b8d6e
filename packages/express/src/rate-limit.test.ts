import { memoryStore, type Decision, type RateKitError, type RateLimitStore } from '@ratekit/core';
import { EventEmitter } from 'node:events';
import express5, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import request from 'supertest';
import { rateLimit } from './rate-limit.js';
import type { Logger, RateLimitedRequest, RateLimitOptions } from './types.js';

// Express 4 is installed under an alias; its API is the same for what these tests use.
const express4: typeof express5 = require('express4');

/** Sat, 21 Nov 2026 12:00:00 GMT: every decision below is made on this fixed clock, moved by hand. */
const T0 = 1_795_262_400_000;
let t = T0;
beforeEach(() => {
  t = T0;
});
const now = () => t;

/** Keeps the configuration checks (e.g. ERR_ERL_UNEXPECTED_X_FORWARDED_FOR in the proxy tests) off the console. */
const quiet: Logger = { warn: () => undefined, error: () => undefined };

/** Turns errors passed to next() into a JSON 500 the tests can read. */
const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
  res.status(500).json({ code: (err as RateKitError).code, message: (err as Error).message });
};

describe.each([
  ['express 4', express4],
  ['express 5', express5],
])('rateLimit on %s', (_version, express) => {
  /** An app with one limiter in front of every route. */
  function appWith(options: RateLimitOptions, setup?: (app: Express) => void): Express {
    const app = express();
    setup?.(app);
    app.use(rateLimit({ now, logger: quiet, ...options }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    app.get('/info', (req, res) => {
      const info = (req as RateLimitedRequest).rateLimit;
      if (info === undefined) {
        res.json(null);
        return;
      }
      const { decision: _decision, ...fields } = info;
      res.json(fields);
    });
    app.get('/fail', (_req, res) => {
      res.status(500).send('failed');
    });
    app.get('/hang-up', (req) => {
      req.socket.destroy();
    });
    app.use(errorHandler);
    return app;
  }

  async function statuses(app: Express, count: number, path = '/', headers: Record<string, string> = {}): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await request(app).get(path).set(headers)).status);
    return seen;
  }

  describe('with the defaults', () => {
    it('admits 5 requests per minute from one client, then answers 429 with the default message', async () => {
      const app = appWith({});
      expect(await statuses(app, 5)).toEqual([200, 200, 200, 200, 200]);
      const refused = await request(app).get('/');
      expect(refused.status).toBe(429);
      expect(refused.text).toBe('Too many requests, please try again later.');
    });

    it('admits the client again once the window has passed', async () => {
      const app = appWith({});
      await statuses(app, 6);
      t = T0 + 60_000;
      expect((await request(app).get('/')).status).toBe(200);
    });

    it('sends the legacy X-RateLimit headers on a 200, reset in epoch seconds, and no standard headers', async () => {
      const res = await request(appWith({})).get('/');
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe('4');
      expect(res.headers['x-ratelimit-reset']).toBe(String((T0 + 60_000) / 1000));
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      expect(res.headers['retry-after']).toBeUndefined();
    });

    it('sends the legacy headers and Retry-After on a 429', async () => {
      const app = appWith({});
      await statuses(app, 5);
      t = T0 + 15_500;
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(res.headers['x-ratelimit-reset']).toBe(String((T0 + 60_000) / 1000));
      expect(res.headers['retry-after']).toBe('45');
    });

    it('fills req.rateLimit with limit, used, remaining, resetTime and key', async () => {
      const app = appWith({});
      await request(app).get('/');
      const res = await request(app).get('/info');
      expect(res.body).toEqual({ limit: 5, used: 2, remaining: 3, resetTime: new Date(T0 + 60_000).toISOString(), key: '127.0.0.1' });
    });

    it('counts refused requests too (express-rate-limit mode): `used` keeps rising past the limit', async () => {
      const app = appWith({ limit: 1, handler: (req, res) => res.status(429).json((req as RateLimitedRequest).rateLimit) });
      await statuses(app, 2);
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ limit: 1, used: 3, remaining: 0 });
    });

    it('keeps the whole decision on req.rateLimit.decision in ratekit mode', async () => {
      let decision: Decision | undefined;
      const app = appWith({}, (a) =>
        a.get('/decision', rateLimit({ now, algorithm: 'fixed-window' }), (req, res) => {
          decision = (req as RateLimitedRequest).rateLimit?.decision;
          res.end();
        }),
      );
      await request(app).get('/decision');
      expect(decision).toMatchObject({ allowed: true, limit: 5, remaining: 4, resetMs: 60_000, nowMs: T0, policy: '5-in-1min' });
    });

    it('returns an anonymous middleware, as express-rate-limit does', () => {
      expect(rateLimit().name).toBe('');
    });

    it('returns a promise from the middleware that settles once the request is passed on', async () => {
      const limiter = rateLimit({ now, limit: 1 });
      const next = jest.fn();
      const req = { ip: '10.0.0.1', app: { get: () => false }, headers: {}, socket: {} } as unknown as Request;
      const res = { headersSent: false, setHeader: () => undefined, once: () => undefined } as unknown as Response;
      const settled = limiter(req, res, next);
      expect(settled).toBeInstanceOf(Promise);
      await expect(settled).resolves.toBeUndefined();
      expect(next).toHaveBeenCalledTimes(1);
    });
  });

  describe('windowMs and limit', () => {
    it('admits `limit` requests per `windowMs`', async () => {
      const app = appWith({ windowMs: 1_000, limit: 2 });
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
      t = T0 + 999;
      expect(await statuses(app, 1)).toEqual([429]);
      t = T0 + 1_000;
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
    });
  });

  describe('standardHeaders', () => {
    it('true sends draft-6 fields besides the legacy ones', async () => {
      const res = await request(appWith({ limit: 3, standardHeaders: true })).get('/');
      expect(res.headers['ratelimit-policy']).toBe('3;w=60');
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe('2');
      expect(res.headers['ratelimit-reset']).toBe('60');
      expect(res.headers['x-ratelimit-remaining']).toBe('2');
    });

    it("'draft-7' sends the combined RateLimit dictionary, and legacyHeaders: false leaves the X- headers out", async () => {
      const res = await request(appWith({ limit: 100, windowMs: 900_000, standardHeaders: 'draft-7', legacyHeaders: false })).get('/');
      expect(res.headers['ratelimit-policy']).toBe('100;w=900');
      expect(res.headers['ratelimit']).toBe('limit=100, remaining=99, reset=900');
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it("'draft-7' reports the refusal and Retry-After on a 429", async () => {
      const app = appWith({ limit: 1, standardHeaders: 'draft-7', legacyHeaders: false });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      expect(res.headers['ratelimit']).toBe('limit=1, remaining=0, reset=60');
      expect(res.headers['retry-after']).toBe('60');
    });

    it("'draft-8' sends named policy items with the hashed partition key", async () => {
      const res = await request(appWith({ limit: 100, windowMs: 900_000, standardHeaders: 'draft-8', legacyHeaders: false })).get('/');
      expect(res.headers['ratelimit']).toBe('"100-in-15min"; r=99; t=900');
      // pk: base64 of the first 12 hex digits of sha256('127.0.0.1'), as express-rate-limit sends it.
      expect(res.headers['ratelimit-policy']).toBe('"100-in-15min"; q=100; w=900; pk=:MTJjYTE3YjQ5YWYy:');
    });

    it("'draft-8' lists every limit of a policy in one field", async () => {
      const app = appWith({
        limits: [
          { limit: 10, windowMs: 1_000 },
          { limit: 2, windowMs: 60_000 },
        ],
        standardHeaders: 'draft-8',
        legacyHeaders: false,
      });
      const res = await request(app).get('/');
      expect(res.headers['ratelimit']).toBe('"10-in-1sec"; r=9; t=1, "2-in-1min"; r=1; t=60');
      expect(res.headers['ratelimit-policy']).toBe('"10-in-1sec"; q=10; w=1; pk=:MTJjYTE3YjQ5YWYy:, "2-in-1min"; q=2; w=60; pk=:MTJjYTE3YjQ5YWYy:');
    });

    it("'draft-8' appends the items of a second limiter on the same route", async () => {
      const app = express();
      app.get(
        '/',
        rateLimit({ now, limit: 10, windowMs: 1_000, standardHeaders: 'draft-8', legacyHeaders: false }),
        rateLimit({ now, limit: 2, windowMs: 60_000, standardHeaders: 'draft-8', legacyHeaders: false }),
        (_req, res) => {
          res.send('ok');
        },
      );
      const res = await request(app).get('/');
      expect(res.headers['ratelimit']).toBe('"10-in-1sec"; r=9; t=1, "2-in-1min"; r=1; t=60');
      expect(res.headers['ratelimit-policy']).toBe('"10-in-1sec"; q=10; w=1; pk=:MTJjYTE3YjQ5YWYy:, "2-in-1min"; q=2; w=60; pk=:MTJjYTE3YjQ5YWYy:');
    });

    it('sends no rate-limit headers and no Retry-After when both header sets are off', async () => {
      const app = appWith({ limit: 1, standardHeaders: false, legacyHeaders: false });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      const names = Object.keys(res.headers).filter((name) => /ratelimit|retry-after/i.test(name));
      expect(names).toEqual([]);
    });
  });

  describe('statusCode, message and handler', () => {
    async function refusal(options: RateLimitOptions) {
      const app = appWith({ limit: 1, ...options });
      await request(app).get('/');
      return request(app).get('/');
    }

    it('statusCode sets the refusal status', async () => {
      expect((await refusal({ statusCode: 503 })).status).toBe(503);
    });

    it('a null statusCode in ratekit mode is unset: 429, and handlers see 429', async () => {
      const seen: unknown[] = [];
      const res = await refusal({ algorithm: 'fixed-window', statusCode: null as unknown as number, message: (_req: Request, res: Response) => (seen.push(res.statusCode), 'no') });
      expect([res.status, res.text, seen]).toEqual([429, 'no', [429]]);
    });

    it('an object message is sent as JSON', async () => {
      const res = await refusal({ message: { error: 'slow down' } });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'slow down' });
    });

    it('a message function is called with the request', async () => {
      const res = await refusal({ message: (req: Request) => `too many for ${req.path}` });
      expect(res.text).toBe('too many for /');
    });

    it('an async message function is awaited', async () => {
      const res = await refusal({ message: async () => ({ retry: true }) });
      expect(res.body).toEqual({ retry: true });
    });

    it('handler answers the refusal, with req.rateLimit set, and gets the resolved options', async () => {
      const res = await refusal({
        statusCode: 418,
        handler: (req, res, _next, options) => {
          const { statusCode, limit, windowMs, standardHeaders, legacyHeaders, message } = options;
          res.status(statusCode).json({ remaining: (req as RateLimitedRequest).rateLimit?.remaining, options: { statusCode, limit, windowMs, standardHeaders, legacyHeaders, message } });
        },
      });
      expect(res.status).toBe(418);
      expect(res.body).toEqual({
        remaining: 0,
        options: { statusCode: 418, limit: 1, windowMs: 60_000, standardHeaders: false, legacyHeaders: true, message: 'Too many requests, please try again later.' },
      });
    });

    it('handler runs after the rate-limit headers are set', async () => {
      let remaining: unknown;
      await refusal({
        handler: (_req, res) => {
          remaining = res.getHeader('X-RateLimit-Remaining');
          res.status(429).end();
        },
      });
      expect(remaining).toBe('0');
    });

    it('a handler that throws reaches the error handler', async () => {
      const res = await refusal({
        handler: () => {
          throw new Error('handler broke');
        },
      });
      expect(res.status).toBe(500);
      expect(res.body.message).toBe('handler broke');
    });

    it('a handler that rejects reaches the error handler', async () => {
      const res = await refusal({ handler: async () => Promise.reject(new Error('async handler broke')) });
      expect(res.status).toBe(500);
      expect(res.body.message).toBe('async handler broke');
    });
  });

  describe('requestPropertyName', () => {
    it('puts the info under the given name instead of req.rateLimit', async () => {
      const app = express();
      app.get('/', rateLimit({ now, requestPropertyName: 'quota' }), (req, res) => {
        const r = req as Request & Record<string, { remaining: number } | undefined>;
        res.json({ quota: r['quota']?.remaining, rateLimit: r['rateLimit'] ?? null });
      });
      expect((await request(app).get('/')).body).toEqual({ quota: 4, rateLimit: null });
    });
  });

  describe('the default key: client IP', () => {
    it('ignores a spoofed X-Forwarded-For when trust proxy is off', async () => {
      const app = appWith({ limit: 1 });
      expect((await request(app).get('/').set('X-Forwarded-For', '198.51.100.1')).status).toBe(200);
      const res = await request(app).get('/info').set('X-Forwarded-For', '198.51.100.2');
      expect(res.status).toBe(429);
    });

    it('counts each forwarded client apart when trust proxy is on', async () => {
      const app = appWith({ limit: 1 }, (a) => a.set('trust proxy', 'loopback'));
      expect((await request(app).get('/info').set('X-Forwarded-For', '198.51.100.1')).body.key).toBe('198.51.100.1');
      expect((await request(app).get('/info').set('X-Forwarded-For', '198.51.100.2')).body.key).toBe('198.51.100.2');
      expect((await request(app).get('/').set('X-Forwarded-For', '198.51.100.1')).status).toBe(429);
    });

    it('groups IPv6 clients by /56: addresses in one /56 share a counter, the next /56 has its own', async () => {
      const app = appWith({ limit: 1 }, (a) => a.set('trust proxy', 'loopback'));
      const first = await request(app).get('/info').set('X-Forwarded-For', '2001:db8::1');
      expect(first.body.key).toBe('2001:db8::/56');
      expect((await request(app).get('/').set('X-Forwarded-For', '2001:db8:0:ff::1')).status).toBe(429);
      const other = await request(app).get('/info').set('X-Forwarded-For', '2001:db8:0:100::1');
      expect(other.status).toBe(200);
      expect(other.body.key).toBe('2001:db8:0:100::/56');
    });

    it('ipv6Subnet sets the grouping; false keeps whole addresses', async () => {
      const by64 = appWith({ limit: 1, ipv6Subnet: 64 }, (a) => a.set('trust proxy', 'loopback'));
      expect((await request(by64).get('/info').set('X-Forwarded-For', '2001:db8::1')).body.key).toBe('2001:db8::/64');
      expect((await request(by64).get('/').set('X-Forwarded-For', '2001:db8:0:ff::1')).status).toBe(200);
      const whole = appWith({ limit: 1, ipv6Subnet: false }, (a) => a.set('trust proxy', 'loopback'));
      expect((await request(whole).get('/info').set('X-Forwarded-For', '2001:db8::1')).body.key).toBe('2001:db8::1');
      expect((await request(whole).get('/').set('X-Forwarded-For', '2001:db8::2')).status).toBe(200);
    });

    it('with a fractional ipv6Subnet: logs ERR_ERL_IPV6_SUBNET when built, limits IPv4 clients, and sends an IPv6 client’s request to next(err), as express-rate-limit does', async () => {
      const errors: Array<{ code?: string }> = [];
      const logger: Logger = { warn: () => undefined, error: (e) => errors.push(e as { code?: string }) };
      let ip = '192.0.2.1';
      const app = appWith({ limit: 1, ipv6Subnet: 48.5, logger, validate: { ip: false } }, (a) =>
        a.use((req, _res, next) => {
          Object.defineProperty(req, 'ip', { value: ip });
          next();
        }),
      );
      expect(errors.map((e) => e.code)).toEqual(['ERR_ERL_IPV6_SUBNET']);
      expect([(await request(app).get('/')).status, (await request(app).get('/')).status]).toEqual([200, 429]);
      ip = '2001:db8::1';
      expect((await request(app).get('/')).status).toBe(500);
    });

    it('counts every request without an IP under one `undefined` key, as express-rate-limit does, and logs ERR_ERL_UNDEFINED_IP_ADDRESS once', async () => {
      const errors: Array<{ code?: string; message: string }> = [];
      const logger: Logger = { warn: () => undefined, error: (e) => errors.push(e as { code?: string; message: string }) };
      const app = appWith({ limit: 1, logger }, (a) =>
        a.use((req, _res, next) => {
          Object.defineProperty(req, 'ip', { value: undefined });
          next();
        }),
      );
      const responses = [await request(app).get('/'), await request(app).get('/'), await request(app).get('/')];
      expect(responses.map((r) => r.status)).toEqual([200, 429, 429]);
      expect(responses[0]!.headers['x-ratelimit-limit']).toBe('1');
      expect(errors.map((e) => e.code)).toEqual(['ERR_ERL_UNDEFINED_IP_ADDRESS']);
      expect(errors[0]!.message).toMatch(/request\.ip/);
    });
  });

  describe('keyGenerator', () => {
    it('counts requests under the key it returns', async () => {
      const app = appWith({ limit: 1, keyGenerator: (req) => req.get('x-api-key') ?? 'anonymous' });
      expect((await request(app).get('/info').set('x-api-key', 'alice')).body.key).toBe('alice');
      expect((await request(app).get('/').set('x-api-key', 'bob')).status).toBe(200);
      expect((await request(app).get('/').set('x-api-key', 'alice')).status).toBe(429);
    });

    it('may return a promise', async () => {
      const app = appWith({ limit: 1, keyGenerator: async (req) => `user:${req.get('x-user')}` });
      expect((await request(app).get('/info').set('x-user', '7')).body.key).toBe('user:7');
      expect((await request(app).get('/').set('x-user', '7')).status).toBe(429);
    });

    it('that throws: the error reaches next(err) as thrown (express-rate-limit mode), and the app keeps serving', async () => {
      const app = appWith({
        keyGenerator: (req) => {
          if (req.get('x-break')) throw new Error('no session');
          return 'k';
        },
      });
      const broken = await request(app).get('/').set('x-break', '1');
      expect(broken.status).toBe(500);
      expect(broken.body).toEqual({ message: 'no session' });
      expect((await request(app).get('/')).status).toBe(200);
    });

    it('that rejects: the error reaches next(err) as rejected (express-rate-limit mode)', async () => {
      const app = appWith({ keyGenerator: async () => Promise.reject(new Error('lookup failed')) });
      expect((await request(app).get('/')).body).toEqual({ message: 'lookup failed' });
    });

    it('that throws in ratekit mode: the error reaches next(err) with ERR_RATEKIT_KEY, and the app keeps serving', async () => {
      const app = appWith({
        algorithm: 'fixed-window',
        keyGenerator: (req) => {
          if (req.get('x-break')) throw new Error('no session');
          return 'k';
        },
      });
      const broken = await request(app).get('/').set('x-break', '1');
      expect(broken.status).toBe(500);
      expect(broken.body.code).toBe('ERR_RATEKIT_KEY');
      expect(broken.body.message).toMatch(/no session/);
      expect((await request(app).get('/')).status).toBe(200);
    });

    it('that rejects in ratekit mode: the error reaches next(err) with ERR_RATEKIT_KEY', async () => {
      const app = appWith({ algorithm: 'fixed-window', keyGenerator: async () => Promise.reject(new Error('lookup failed')) });
      const res = await request(app).get('/');
      expect(res.body).toEqual({ code: 'ERR_RATEKIT_KEY', message: expect.stringMatching(/lookup failed/) });
    });

    it('that returns no string: what it returned is the key, as express-rate-limit counts it (all such requests share it)', async () => {
      const app = appWith({ limit: 1, keyGenerator: () => undefined as unknown as string });
      expect((await request(app).get('/')).status).toBe(200);
      expect((await request(app).get('/')).status).toBe(429);
    });
  });

  describe('per-route policies', () => {
    const windowMs = 10_000;

    it('a limiter per route keeps a counter per route: reads and writes are limited apart', async () => {
      const app = express();
      app.get('/items', rateLimit({ now, windowMs, limit: 3 }), (_req, res) => {
        res.json([]);
      });
      app.post('/items', rateLimit({ now, windowMs, limit: 1 }), (_req, res) => {
        res.status(201).end();
      });
      expect((await request(app).post('/items')).status).toBe(201);
      expect((await request(app).post('/items')).status).toBe(429);
      const reads = [];
      for (let i = 0; i < 4; i++) reads.push((await request(app).get('/items')).status);
      expect(reads).toEqual([200, 200, 200, 429]);
    });

    it('one limiter with limits by method keeps separate counters for the different limits', async () => {
      const read = { limit: 3, windowMs };
      const write = { limit: 1, windowMs };
      const app = express();
      app.use(rateLimit({ now, limits: (req) => (req.method === 'GET' ? read : write) }));
      app.get('/items', (_req, res) => {
        res.json([]);
      });
      app.post('/items', (_req, res) => {
        res.status(201).end();
      });
      expect((await request(app).post('/items')).status).toBe(201);
      const second = await request(app).post('/items');
      expect(second.status).toBe(429);
      expect(second.headers['x-ratelimit-limit']).toBe('1');
      const readRes = await request(app).get('/items');
      expect(readRes.status).toBe(200);
      expect(readRes.headers['x-ratelimit-limit']).toBe('3');
      expect(readRes.headers['x-ratelimit-remaining']).toBe('2');
    });
  });

  describe('algorithm', () => {
    it("'token-bucket' admits a burst of `limit`, then refills continuously", async () => {
      const app = appWith({ algorithm: 'token-bucket', limit: 2, windowMs: 1_000 });
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
      t = T0 + 500; // one token back
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it("'sliding-window' weighs the previous window's count", async () => {
      const app = appWith({ algorithm: 'sliding-window', limit: 2, windowMs: 1_000 });
      expect(await statuses(app, 2)).toEqual([200, 200]);
      t = T0 + 1_500; // half of the previous window still overlaps: 2 × 0.5 = 1 counted
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it("'delay' holds an over-rate request for decision.delayMs before passing it on, and says so in X-Slow-Down-Delay", async () => {
      const app = appWith({ algorithm: 'delay', limit: 1, windowMs: 40 });
      expect((await request(app).get('/')).status).toBe(200);
      const started = Date.now();
      const held = await request(app).get('/info');
      expect(held.status).toBe(200);
      expect(held.headers['x-slow-down-delay']).toBe('40');
      expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    });
  });

  describe('cost', () => {
    it('a number charges that many units per request; a refused request charges nothing', async () => {
      const app = appWith({ limit: 5, cost: 2 });
      const remaining = [];
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/');
        remaining.push([res.status, res.headers['x-ratelimit-remaining']]);
      }
      expect(remaining).toEqual([
        [200, '3'],
        [200, '1'],
        [429, '1'],
      ]);
    });

    it('a function of the request sets each request’s cost', async () => {
      const app = appWith({ limit: 10, cost: (req) => Number(req.get('x-cost') ?? 1) });
      expect((await request(app).get('/').set('x-cost', '7')).headers['x-ratelimit-remaining']).toBe('3');
      expect((await request(app).get('/').set('x-cost', '4')).status).toBe(429);
      expect((await request(app).get('/')).headers['x-ratelimit-remaining']).toBe('2');
    });

    it('a cost function returning a bad cost sends an error to next(err)', async () => {
      const app = appWith({ cost: () => -1 });
      const res = await request(app).get('/');
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('ERR_RATEKIT_INVALID_OPTION');
    });
  });

  describe('several limits', () => {
    it('admits only when every limit admits, and a refusal charges none of them', async () => {
      const app = appWith({
        limits: [
          { limit: 2, windowMs: 1_000, name: 'second' },
          { limit: 3, windowMs: 60_000, name: 'minute' },
        ],
        // Answer refusals with each limit's remaining units and what this request paid.
        handler: (req, res) => {
          const { decision } = (req as RateLimitedRequest).rateLimit!;
          res.status(429).json(decision!.limits.map((l) => [l.name, l.remaining, l.tokensPaid]));
        },
      });
      // timeline: ms from T0 → status
      const timeline: Array<[number, number]> = [
        [0, 200],
        [0, 200],
        [0, 429], // 'second' refuses; 'minute' keeps 1
        [1_000, 200], // 'minute' now spent
        [2_000, 429], // 'minute' refuses; 'second' stays uncharged
      ];
      const seen: Array<[number, number]> = [];
      let last: request.Response | undefined;
      for (const [at] of timeline) {
        t = T0 + at;
        last = await request(app).get('/');
        seen.push([at, last.status]);
      }
      expect(seen).toEqual(timeline);
      // 'second' starts a fresh window at 2 000 ms and is left at 2: the refused request paid nothing.
      expect(last!.body).toEqual([
        ['second', 2, 0],
        ['minute', 0, 0],
      ]);
    });

    it('sends Retry-After for the refusing limit', async () => {
      const app = appWith({
        limits: [
          { limit: 10, windowMs: 1_000, name: 'second' },
          { limit: 1, windowMs: 60_000, name: 'minute' },
        ],
      });
      await request(app).get('/');
      t = T0 + 2_000;
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('58');
    });

    it('reports the binding limit in the legacy headers and req.rateLimit', async () => {
      const app = appWith({
        limits: [
          { limit: 10, windowMs: 1_000, name: 'second' },
          { limit: 3, windowMs: 60_000, name: 'minute' },
        ],
      });
      const res = await request(app).get('/info');
      expect(res.body).toMatchObject({ limit: 3, remaining: 2, used: 1 });
      expect(res.headers['x-ratelimit-limit']).toBe('3');
    });
  });

  describe('skip', () => {
    it('a skipped request is not counted and gets no headers and no req.rateLimit', async () => {
      const app = appWith({ limit: 1, skip: (req) => req.path === '/info' });
      const skipped = await request(app).get('/info');
      expect(skipped.status).toBe(200);
      expect(skipped.body).toBeNull();
      expect(skipped.headers['x-ratelimit-limit']).toBeUndefined();
      await request(app).get('/info');
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it('may return a promise', async () => {
      const app = appWith({ limit: 1, skip: async (req) => req.get('x-internal') === '1' });
      expect(await statuses(app, 3, '/', { 'x-internal': '1' })).toEqual([200, 200, 200]);
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it('that throws: the error reaches next(err)', async () => {
      const app = appWith({
        skip: () => {
          throw new Error('skip broke');
        },
      });
      expect((await request(app).get('/')).body.message).toBe('skip broke');
    });
  });

  describe('skipFailedRequests', () => {
    it('gives back the cost of requests whose response failed', async () => {
      const app = appWith({ limit: 1, skipFailedRequests: true });
      expect(await statuses(app, 3, '/fail')).toEqual([500, 500, 500]);
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it('gives back the cost of requests whose connection closed before the response', async () => {
      const app = appWith({ limit: 1, skipFailedRequests: true });
      await expect(request(app).get('/hang-up')).rejects.toThrow();
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    it('uses requestWasSuccessful to tell failures', async () => {
      const app = appWith({ limit: 1, skipFailedRequests: true, requestWasSuccessful: (_req, res) => res.statusCode !== 200 });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
      expect(await statuses(app, 2, '/fail')).toEqual([500, 429]);
    });
  });

  describe('skipSuccessfulRequests', () => {
    it('gives back the cost of successful requests, so only failures count', async () => {
      const app = appWith({ limit: 1, skipSuccessfulRequests: true });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
      expect(await statuses(app, 2, '/fail')).toEqual([500, 429]);
    });

    it('refunds with the request as context, so dynamic limits refund the limit they charged', async () => {
      const app = appWith({ limits: (req) => (req.path === '/fail' ? { limit: 1, windowMs: 1_000, name: 'fail' } : { limit: 1, windowMs: 1_000 }), skipSuccessfulRequests: true });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
      expect(await statuses(app, 2, '/fail')).toEqual([500, 429]);
    });
  });

  describe('store and store errors', () => {
    const failing: RateLimitStore = {
      name: 'failing',
      shared: true,
      clock: 'caller',
      evaluate: () => {
        throw new Error('connection refused');
      },
      resetKey: () => undefined,
    };

    it("onStoreError 'throw' (the default) sends ERR_RATEKIT_STORE to next(err)", async () => {
      const res = await request(appWith({ store: failing })).get('/');
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('ERR_RATEKIT_STORE');
    });

    it("onStoreError 'throw' also covers a store that rejects", async () => {
      const rejecting: RateLimitStore = { ...failing, evaluate: async () => Promise.reject(new Error('timeout')) };
      expect((await request(appWith({ store: rejecting })).get('/')).body.code).toBe('ERR_RATEKIT_STORE');
    });

    it("onStoreError 'allow' lets the request through and reports the error", async () => {
      const errors: RateKitError[] = [];
      const app = appWith({ store: failing, onStoreError: 'allow', onError: (e) => errors.push(e) });
      expect((await request(app).get('/')).status).toBe(200);
      expect(errors.map((e) => e.code)).toEqual(['ERR_RATEKIT_STORE']);
    });

    it("onStoreError 'deny' refuses the request", async () => {
      const app = appWith({ store: failing, onStoreError: 'deny', onError: () => undefined });
      expect((await request(app).get('/')).status).toBe(429);
    });

    it('works with an asynchronous store', async () => {
      const memory = memoryStore();
      const asyncStore: RateLimitStore = { ...memory, name: 'async', evaluate: async (r) => memory.evaluate(r), resetKey: async (k, n) => memory.resetKey(k, n) };
      const app = appWith({ store: asyncStore, limit: 2 });
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
    });

    it('two limiters sharing a store keep their counters apart by prefix', async () => {
      const store = memoryStore();
      const app = express();
      app.get('/a', rateLimit({ now, store, prefix: 'a', limit: 1 }), (_req, res) => {
        res.end();
      });
      app.get('/b', rateLimit({ now, store, prefix: 'b', limit: 1 }), (_req, res) => {
        res.end();
      });
      expect((await request(app).get('/a')).status).toBe(200);
      expect((await request(app).get('/b')).status).toBe(200);
      expect((await request(app).get('/a')).status).toBe(429);
    });
  });

  describe('the synchronous path', () => {
    /** A request and response with just what the middleware reads and writes. */
    function bare() {
      const headers: Record<string, string> = {};
      const req = { ip: '203.0.113.7', headers: {}, socket: { remoteAddress: '203.0.113.7' }, app: { get: () => false } } as unknown as Request;
      const res = { headersSent: false, setHeader: (name: string, value: string) => void (headers[name] = value), append: () => undefined } as unknown as express5.Response;
      return { req, res, headers };
    }

    it.each([
      ['express-rate-limit mode, default MemoryStore', {}],
      ['ratekit mode, in-memory store', { algorithm: 'gcra' as const }],
    ])('%s: next() runs before the middleware returns', (_mode, options) => {
      const limiter = rateLimit({ now, logger: quiet, ...options });
      const { req, res, headers } = bare();
      let called = false;
      limiter(req, res, () => {
        called = true;
      });
      expect(called).toBe(true);
      expect(headers['X-RateLimit-Remaining']).toBe('4');
    });
  });

  describe('getKey', () => {
    it("answers the store's hits and reset time for a key, undefined for an unknown one (express-rate-limit mode)", async () => {
      const limiter = rateLimit({ now, limit: 3 });
      const app = express();
      app.get('/', limiter, (_req, res) => {
        res.end();
      });
      await statuses(app, 2);
      expect(await limiter.getKey('127.0.0.1')).toEqual({ totalHits: 2, resetTime: new Date(T0 + 60_000) });
      expect(await limiter.getKey('198.51.100.1')).toBeUndefined();
      expect(limiter.limiter).toBeUndefined();
    });

    it('throws synchronously when the store has no get', () => {
      const store = { increment: () => ({ totalHits: 1, resetTime: undefined }), decrement: () => undefined, resetKey: () => undefined };
      expect(() => rateLimit({ store }).getKey('k')).toThrow(new Error('The current store does not support the get/getKey method'));
    });

    it('peeks without counting in ratekit mode', async () => {
      const limiter = rateLimit({ now, limit: 3, algorithm: 'sliding-log' });
      const app = express();
      app.get('/', limiter, (_req, res) => {
        res.end();
      });
      await statuses(app, 1);
      expect(await limiter.getKey('127.0.0.1')).toEqual({ totalHits: 1, resetTime: new Date(T0 + 60_000) });
      expect(await limiter.getKey('127.0.0.1')).toEqual({ totalHits: 1, resetTime: new Date(T0 + 60_000) });
      expect(await limiter.getKey('198.51.100.1')).toBeUndefined();
      expect(limiter.limiter).toBeDefined();
    });
  });

  describe('ratekit mode extras', () => {
    it('gives handlers the options with statusCode and the default message, and the mode and the limiter', async () => {
      let seen: { mode: string; hasLimiter: boolean; algorithm: unknown; statusCode: number; message: unknown } | undefined;
      const app = appWith({
        algorithm: 'gcra',
        limit: 1,
        handler: (_req, res, _next, options) => {
          const { algorithm, statusCode, message } = options;
          seen = { mode: (options as unknown as { mode: string }).mode, hasLimiter: (options as { limiter?: unknown }).limiter !== undefined, algorithm, statusCode, message };
          res.status(statusCode).send(message);
        },
      });
      await request(app).get('/');
      const refused = await request(app).get('/');
      expect([refused.status, refused.text]).toEqual([429, 'Too many requests, please try again later.']);
      expect(seen).toEqual({ mode: 'ratekit', hasLimiter: true, algorithm: 'gcra', statusCode: 429, message: 'Too many requests, please try again later.' });
    });

    it('a named limit names its draft-8 policy', async () => {
      const res = await request(appWith({ limits: { algorithm: 'gcra', limit: 10, windowMs: 1_000, name: 'burst' }, standardHeaders: 'draft-8', legacyHeaders: false })).get('/');
      expect(res.headers['ratelimit']).toBe('"burst"; r=9; t=1');
    });

    it('Retry-After is when the limiter admits the request again', async () => {
      const app = appWith({ algorithm: 'fixed-window', limit: 1 });
      await request(app).get('/');
      t += 15_000;
      expect((await request(app).get('/')).headers['retry-after']).toBe('45');
    });

    it('a request without req.ip (default key) goes to next(err) with ERR_RATEKIT_KEY', async () => {
      const app = appWith({ algorithm: 'fixed-window' }, (a) =>
        a.use((req, _res, next) => {
          Object.defineProperty(req, 'ip', { value: undefined });
          next();
        }),
      );
      expect((await request(app).get('/')).body).toEqual({ code: 'ERR_RATEKIT_KEY', message: expect.stringMatching(/client address/) });
    });

    it('onDecision sees every decision with the request and key, before the request goes on', async () => {
      const seen: string[] = [];
      const app = appWith({ algorithm: 'fixed-window', limit: 1, onDecision: async (decision, req, key) => void seen.push(`${req.path} ${key} ${decision.allowed}`) });
      expect(await statuses(app, 2)).toEqual([200, 429]);
      expect(seen).toEqual(['/ 127.0.0.1 true', '/ 127.0.0.1 false']);
    });

    it('a held request that the client leaves never reaches the app', async () => {
      let reached = 0;
      const limiter = rateLimit({ now, algorithm: 'delay', limit: 1, windowMs: 60_000 });
      const delays: unknown[] = [];
      const res = Object.assign(new EventEmitter(), {
        headersSent: false,
        setHeader: (name: string, value: string) => void (name === 'X-Slow-Down-Delay' && delays.push(value)),
        append: () => undefined,
      }) as unknown as express5.Response;
      const req = { ip: '192.0.2.1' } as unknown as Request;
      await limiter(req, res, () => reached++);
      const held = limiter(req, res, () => reached++);
      res.emit('close');
      await held;
      expect([reached, delays]).toEqual([1, ['60000']]);
    });
  });

  describe('resetKey', () => {
    it('forgets a key, so a refused client is admitted again', async () => {
      const limiter = rateLimit({ now, limit: 1 });
      const app = express();
      app.get('/', limiter, (_req, res) => {
        res.end();
      });
      expect(await statuses(app, 2)).toEqual([200, 429]);
      await limiter.resetKey('127.0.0.1');
      expect(await statuses(app, 1)).toEqual([200]);
    });
  });
});
