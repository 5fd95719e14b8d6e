import { EventEmitter, once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateKitOptionError } from '@ratekit/core';
import express5, { type Express, type Request, type Response } from 'express';
import { slowDown as realSlowDown } from 'express-slow-down';
import request from 'supertest';
import { slowDown } from './slow-down.js';
import type { Logger, SlowDownOptions } from '../types.js';

const express4: typeof express5 = require('express4');

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

/** Fakes `setTimeout` (the hold) and, when asked, `Date` (express-slow-down's clock); nothing else. */
function fakeTimers(fakeDate: boolean) {
  const keep = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval'] as const;
  jest.useFakeTimers({ now: T0, doNotFake: fakeDate ? [...keep] : [...keep, 'Date'] });
}
afterEach(() => jest.useRealTimers());

const quiet: Logger = { warn: () => undefined, error: () => undefined };
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** What one request saw: how long it was held (on the fake clock), its status, X-Slow-Down-Delay and req.slowDown. */
interface Held {
  heldMs: number;
  status: number;
  delayHeader: string | undefined;
  body: Record<string, unknown> | null;
  rawHeaders: string[];
}

/**
 * Sends a GET and measures, on the fake clock, how long the response is held:
 * advances the fake timers 1 ms at a time while the request is pending.
 */
async function send(app: Express, path = '/', headers: Record<string, string> = {}): Promise<Held> {
  let done = false as boolean; // set by the request's callback, which flow analysis cannot see
  const pending = request(app)
    .get(path)
    .set(headers)
    .then((res) => {
      done = true;
      return res;
    });
  let heldMs = 0;
  for (let idle = 0; !done;) {
    await tick();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the request's callback may set it during the tick
    if (done) break;
    if (jest.getTimerCount() === 0) {
      // Not held (yet): the request is still on its way in, or being answered.
      if (++idle > 2_000) throw new Error('the request neither finished nor was held');
      continue;
    }
    jest.advanceTimersByTime(1);
    heldMs++;
  }
  const res = await pending;
  return {
    heldMs,
    status: res.status,
    delayHeader: res.headers['x-slow-down-delay'],
    body: res.body as Record<string, unknown> | null,
    rawHeaders: (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders,
  };
}

function appWith(middleware: express5.RequestHandler, express: typeof express5 = express5): Express {
  const app = express();
  app.use(middleware);
  app.use((req: Request, res: Response) => {
    res.json((req as Request & { slowDown?: unknown }).slowDown ?? null);
  });
  return app;
}

describe.each([
  ['express 4', express4],
  ['express 5', express5],
])('slowDown on %s', (_version, express) => {
  describe('on a fixed clock, with delayAfter 2, the default delayMs and maxDelayMs 2 500', () => {
    beforeEach(() => fakeTimers(false));

    // timeline: ms from T0 → the delay applied (held for exactly that long, shown in X-Slow-Down-Delay)
    const timeline: Array<[number, number]> = [
      [0, 0],
      [0, 0],
      [0, 1_000], // 3rd request: (3 - 2) × 1 000
      [0, 2_000],
      [0, 2_500], // (5 - 2) × 1 000, capped by maxDelayMs
      [9_999, 2_500],
      [10_000, 0], // a new window
    ];

    it('holds each request over delayAfter for its delay, then serves it', async () => {
      let t = T0;
      const app = appWith(slowDown({ windowMs: 10_000, delayAfter: 2, maxDelayMs: 2_500, delayHeader: true, now: () => t, logger: quiet }), express);
      const seen: Array<[number, number]> = [];
      for (const [at, delay] of timeline) {
        t = T0 + at;
        const held = await send(app);
        expect(held).toMatchObject({ status: 200, heldMs: delay, delayHeader: String(delay) });
        seen.push([at, held.heldMs]);
      }
      expect(seen).toEqual(timeline);
    });

    it('fills req.slowDown with delayAfter as the limit, the hits, the reset time and the delay', async () => {
      let t = T0;
      const app = appWith(slowDown({ windowMs: 10_000, delayAfter: 2, now: () => t, logger: quiet }), express);
      await send(app);
      t = T0 + 4_000;
      await send(app);
      const third = await send(app);
      expect(third.body).toEqual({ limit: 2, used: 3, remaining: 0, resetTime: new Date(T0 + 10_000).toISOString(), key: '127.0.0.1', delay: 1_000 });
    });
  });

  describe('delay options', () => {
    beforeEach(() => fakeTimers(false));

    it('a numeric delayMs holds every request over delayAfter for that long (express-slow-down ≥ 2)', async () => {
      const app = appWith(slowDown({ delayAfter: 1, delayMs: 300, now: () => T0, logger: quiet, validate: { delayMs: false } }), express);
      const delays = [];
      for (let i = 0; i < 4; i++) delays.push((await send(app)).heldMs);
      expect(delays).toEqual([0, 300, 300, 300]);
    });

    it('delayMs, delayAfter and maxDelayMs may be (async) functions of the hits and the request', async () => {
      const app = appWith(
        slowDown({
          delayAfter: async (req) => (req.get('x-plan') === 'pro' ? 3 : 1),
          delayMs: async (used, req) => (used - (req as Request & { slowDown: { limit: number } }).slowDown.limit) * 100,
          maxDelayMs: (req) => (req.get('x-plan') === 'pro' ? 150 : 10_000),
          now: () => T0,
          logger: quiet,
        }),
        express,
      );
      const pro = [];
      for (let i = 0; i < 5; i++) pro.push((await send(app, '/', { 'x-plan': 'pro' })).heldMs);
      expect(pro).toEqual([0, 0, 0, 100, 150]);
      expect((await send(app)).heldMs).toBe(500); // the same key, now counted against delayAfter 1
    });

    it('delayAfter 0 holds every request', async () => {
      const app = appWith(slowDown({ delayAfter: 0, delayMs: () => 50, now: () => T0, logger: quiet }), express);
      expect((await send(app)).heldMs).toBe(50);
    });

    it('skip and skipSuccessfulRequests count as in rateLimit', async () => {
      const app = appWith(slowDown({ delayAfter: 1, delayMs: () => 100, skip: (req) => req.path === '/free', skipSuccessfulRequests: true, now: () => T0, logger: quiet }), express);
      for (let i = 0; i < 3; i++) expect((await send(app)).heldMs).toBe(0);
      expect((await send(app, '/free')).body).toBeNull();
    });
  });

  describe('headers', () => {
    beforeEach(() => fakeTimers(false));

    it('sends no rate-limit headers and no X-Slow-Down-Delay by default, as express-slow-down', async () => {
      const app = appWith(slowDown({ delayAfter: 0, delayMs: () => 10, now: () => T0, logger: quiet }), express);
      const held = await send(app);
      expect(held.heldMs).toBe(10);
      expect(held.rawHeaders.filter((_v, i) => i % 2 === 0).filter((name) => /ratelimit|retry-after|slow-down/i.test(name))).toEqual([]);
    });

    it('sends X-Slow-Down-Delay on every counted response with delayHeader: true (0 when not held)', async () => {
      const app = appWith(slowDown({ delayAfter: 1, delayMs: () => 10, delayHeader: true, now: () => T0, logger: quiet }), express);
      expect((await send(app)).delayHeader).toBe('0');
      expect(await send(app)).toMatchObject({ heldMs: 10, delayHeader: '10' });
    });
  });
});

describe('slowDown headers when turned on', () => {
  beforeEach(() => fakeTimers(false));

  it('legacy and draft-7 headers describe delayAfter; no Retry-After', async () => {
    const app = appWith(slowDown({ windowMs: 60_000, delayAfter: 1, delayMs: () => 10, legacyHeaders: true, standardHeaders: 'draft-7', delayHeader: true, now: () => T0, logger: quiet }));
    await send(app);
    const held = await send(app);
    const headers = Object.fromEntries(held.rawHeaders.flatMap((v, i, all) => (i % 2 === 0 ? [[v.toLowerCase(), all[i + 1]]] : [])));
    expect(held.heldMs).toBe(10);
    expect(headers).toMatchObject({
      'x-ratelimit-limit': '1',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String((T0 + 60_000) / 1_000),
      'ratelimit-policy': '1;w=60',
      ratelimit: 'limit=1, remaining=0, reset=60',
      'x-slow-down-delay': '10',
    });
    expect(headers['retry-after']).toBeUndefined();
  });
});

describe('slowDown when the client disconnects', () => {
  beforeEach(() => fakeTimers(false));

  it('cancels the hold: the request never reaches the next handler', async () => {
    let served = 0;
    const app = express5();
    app.use(slowDown({ delayAfter: 0, delayMs: () => 5_000, now: () => T0, logger: quiet }));
    app.use((_req, res) => {
      served++;
      res.send('served');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const client = httpRequest({ host: '127.0.0.1', port, path: '/' });
      client.on('error', () => undefined);
      client.end();
      while (jest.getTimerCount() === 0) await tick();
      client.destroy();
      for (let i = 0; i < 1_000 && jest.getTimerCount() > 0; i++) await tick();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(10_000);
      await tick();
      expect(served).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe('slowDown against express-slow-down', () => {
  beforeEach(() => fakeTimers(true));

  it('holds the same requests as long, answers the same bytes, and fills the same req.slowDown', async () => {
    const options: SlowDownOptions = { windowMs: 10_000, delayAfter: 2, delayMs: (used: number) => (used - 2) * 250, maxDelayMs: 600, logger: quiet };
    const results = [];
    for (const build of [() => realSlowDown(options as never), () => slowDown(options)]) {
      jest.setSystemTime(T0);
      const app = appWith(build() as express5.RequestHandler);
      const seen = [];
      for (const at of [0, 0, 0, 1_000, 2_000, 10_000]) {
        jest.setSystemTime(T0 + at);
        const held = await send(app);
        seen.push({ ...held, rawHeaders: held.rawHeaders.map((v, i, all) => (i % 2 === 1 && all[i - 1]!.toLowerCase() === 'date' ? '<date>' : v)) });
      }
      results.push(seen);
    }
    expect(results[0]!.map((r) => r.heldMs)).toEqual([0, 0, 250, 500, 600, 0]);
    expect(results[1]).toEqual(results[0]);
  });

  it('settles its promise as express-slow-down’s does: once a held request’s timer is set, not when the delay has run', async () => {
    for (const build of [realSlowDown, slowDown]) {
      const middleware = build({ delayAfter: 0, delayMs: () => 200, validate: false, logger: quiet }) as unknown as (req: unknown, res: unknown, next: () => void) => Promise<void>;
      const req = Object.assign(new EventEmitter(), { ip: '10.0.0.1', app: { get: () => false }, headers: {} });
      const next = jest.fn();
      await middleware(req, new EventEmitter(), next);
      expect(jest.getTimerCount()).toBe(1);
      expect(next).not.toHaveBeenCalled();
      jest.advanceTimersByTime(199);
      expect(next).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(next).toHaveBeenCalledTimes(1);
    }
  });

  it('logs express-slow-down’s WRN_ESD_DELAYMS warning, word for word, for a numeric delayMs', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      realSlowDown({ delayMs: 500 });
      const warnings: unknown[] = [];
      slowDown({ delayMs: 500, logger: { warn: (e) => warnings.push(e), error: () => undefined } });
      const reference = warn.mock.calls[0]![0] as Error & { code: string; help: string };
      expect(warnings).toEqual([expect.objectContaining({ name: 'ExpressSlowDownWarning', code: reference.code, help: reference.help, message: reference.message })]);
    } finally {
      warn.mockRestore();
    }
  });

  it('carries resetKey and getKey', async () => {
    const limiter = slowDown({ delayAfter: 5, logger: quiet });
    const app = appWith(limiter);
    await send(app);
    expect(await limiter.getKey('127.0.0.1')).toEqual({ totalHits: 1, resetTime: new Date(T0 + 60_000) });
    await limiter.resetKey('127.0.0.1');
    expect(await limiter.getKey('127.0.0.1')).toBeUndefined();
  });
});

describe('slowDown options', () => {
  it.each([
    ['limit', { limit: 5 }],
    ['max', { max: 5 }],
  ])('throws express-slow-down’s error for %s', (_name, options) => {
    expect(() => slowDown(options as never)).toThrow(new Error('The limit/max option is not supported by express-slow-down, please use delayAfter instead.'));
  });

  it('throws express-slow-down’s error for a maxDelayMs beyond setTimeout', () => {
    expect(() => slowDown({ maxDelayMs: 2 ** 31 })).toThrow("The 'maxDelayMs' option cannot be greater than 2147483647 due to Node.js setTimeout limits.");
  });

  it.each([
    ['delayAfter "1"', { delayAfter: '1' }, 'delayAfter'],
    ['delayMs NaN', { delayMs: Number.NaN }, 'delayMs'],
    ['delayHeader "yes"', { delayHeader: 'yes' }, 'delayHeader'],
    ['a ratekit option', { algorithm: 'delay' }, 'algorithm'],
  ])('throws RateKitOptionError for %s', (_situation, options, option) => {
    expect(() => slowDown({ logger: quiet, ...(options as SlowDownOptions) })).toThrow(RateKitOptionError);
    try {
      slowDown({ logger: quiet, ...(options as SlowDownOptions) });
    } catch (error) {
      expect(error).toMatchObject({ option });
    }
  });

  it.each([
    ['delayAfter -Infinity (would hold every request for ~24 days)', { delayAfter: Number.NEGATIVE_INFINITY }, 'delayAfter', '-Infinity'],
    ['delayAfter Infinity (would never hold one)', { delayAfter: Number.POSITIVE_INFINITY }, 'delayAfter', 'Infinity'],
    ['delayAfter -1', { delayAfter: -1 }, 'delayAfter', '-1'],
    ['maxDelayMs -1', { maxDelayMs: -1 }, 'maxDelayMs', '-1'],
    ['maxDelayMs NaN', { maxDelayMs: Number.NaN }, 'maxDelayMs', 'NaN'],
  ])('refuses %s when built, with ERR_RATEKIT_INVALID_OPTION naming the option, what it expects and what it got', (_situation, options, option, got) => {
    let thrown: unknown;
    try {
      slowDown({ logger: quiet, ...(options as SlowDownOptions) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RateKitOptionError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    expect((thrown as Error).message).toContain(`\`${option}\``);
    expect((thrown as Error).message).toMatch(/Expected .* got /);
    expect((thrown as Error).message).toContain(got);
  });

  it('accepts delayAfter 0 and maxDelayMs 0 (every request counted, none held)', () => {
    expect(() => slowDown({ logger: quiet, delayAfter: 0, maxDelayMs: 0 })).not.toThrow();
  });

  it.each([
    ['a delayAfter function answering -Infinity', { delayAfter: () => Number.NEGATIVE_INFINITY }, 'delayAfter'],
    ['an async delayAfter function answering -1', { delayAfter: async () => -1 }, 'delayAfter'],
    ['a maxDelayMs function answering -1', { delayAfter: 0, maxDelayMs: () => -1 }, 'maxDelayMs'],
  ])('sends the request to next(err) at once, never holding it, for %s', async (_situation, options, option) => {
    const app = express5();
    app.use(slowDown({ logger: quiet, ...(options as SlowDownOptions) }));
    app.get('/', (_req, res) => {
      res.send('served');
    });
    app.use(((error, _req, res, _next) => {
      res.status(500).json({ code: (error as { code?: string }).code, option: (error as { option?: string }).option });
    }) as express5.ErrorRequestHandler);
    const started = Date.now();
    const res = await request(app).get('/').timeout(3_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
  });

  it('puts its info on req.slowDown by default, and its defaults on the options stores see', () => {
    let seen: Record<string, unknown> | undefined;
    slowDown({
      store: { init: (o: unknown) => void (seen = o as Record<string, unknown>), increment: () => ({ totalHits: 1, resetTime: undefined }), decrement: () => undefined, resetKey: () => undefined },
      logger: quiet,
    });
    expect(seen).toMatchObject({ requestPropertyName: 'slowDown', legacyHeaders: false, standardHeaders: false, limit: 0, windowMs: 60_000 });
  });
});
