import Koa from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import { ratelimit } from '../rate-limit.js';
import { MemoryDriver, type MemoryEntry } from './memory-driver.js';

// The incumbent, for side-by-side specifications: same options, same requests, same answers.
const upstream = require('koa-ratelimit') as (options: Record<string, unknown>) => Koa.Middleware;

const T0 = 1_700_000_000_000; // a whole second

type Factory = (options: Record<string, unknown>) => Koa.Middleware;
const ours: Factory = (options) => ratelimit(options as never);

/** An app with `middleware` before an `ok` handler; counts handled requests and collects app errors. */
function harness(App: typeof Koa, ...middleware: Koa.Middleware[]) {
  const app = new App();
  const seen = { handled: 0, errors: [] as unknown[], states: [] as unknown[] };
  app.on('error', (error) => seen.errors.push(error));
  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      seen.states.push(ctx.state.rateLimit);
    }
  });
  for (const m of middleware) app.use(m);
  app.use((ctx) => {
    seen.handled++;
    ctx.body = 'ok';
  });
  return { app, seen, get: (path = '/') => request(app.callback()).get(path) };
}

/** Every timer but Date's stays real when a test fakes the clock: supertest's own timers run, and the clock stands still unless moved. */
const REAL_TIMERS = ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'hrtime'] as const;

/**
 * Waits until the current second is at most 100 ms old (checking the clock, not trusting a timer:
 * a late timer only means another turn), which leaves the next requests 900 ms, the margin, before
 * the second ends.
 */
async function clearOfASecondTurn(): Promise<void> {
  while (Date.now() % 1_000 > 100) await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 1));
}

/** What a client sees of a response, the reset header reduced to whole seconds (it carries the clock's fraction). */
function seen(res: request.Response, resetName = 'x-ratelimit-reset') {
  const headers = Object.fromEntries(Object.entries(res.headers as Record<string, string>).filter(([name]) => /ratelimit|retry-after|rate-limit/.test(name)));
  if (headers[resetName] !== undefined) headers[resetName] = String(Math.floor(Number(headers[resetName])));
  return { status: res.status, text: res.text, headers };
}

describe.each([
  ['Koa 2', Koa2],
  ['Koa 3', Koa],
] as const)("koa-ratelimit mode (only koa-ratelimit's options) on %s", (_version, App) => {
  describe('answers as koa-ratelimit 6 does, request for request', () => {
    it.each([
      // 2 minutes, not 1: the refusal's `retry in …` is rounded by the ms package, which for 60 s
      // turns from `60 seconds` to `59 seconds` 500 ms into the window, and a busy machine spread the
      // two middlewares' requests across that turn; `2 minutes` holds for 30 s (the margin).
      ['the memory driver on a db Map', { driver: 'memory', max: 3, duration: 120_000 }],
      ['custom header names, status and message', { driver: 'memory', max: 2, headers: { remaining: 'Rate-Remaining', total: 'Rate-Total' }, status: 503, errorMessage: 'Slow down.' }],
      ['disableHeader', { driver: 'memory', max: 1, disableHeader: true }],
      ['an object errorMessage (sent as JSON)', { driver: 'memory', max: 1, errorMessage: { error: 'rate_limited' } }],
      ['a custom id', { driver: 'memory', max: 1, id: (ctx: Koa.Context) => ctx.get('x-user') || false }],
    ])('%s', async (_name, options) => {
      const theirs = harness(App, upstream({ ...options, db: new Map() }));
      const mine = harness(App, ours({ ...options, db: new Map() }));
      // Each window starts at its first request and the reset header is in whole seconds. Starting
      // early in a second, the two first requests, a few ms apart, seldom straddle the turn of one
      // (koa-ratelimit reads its own clock, Date.now at load plus process.hrtime since, which no stub
      // reaches, within a millisecond of Date.now): each window opened between these two readings.
      await clearOfASecondTurn();
      const firstSentAt = Date.now() - 1;
      let firstAnsweredAt = Infinity;
      const durationMs = (options as { duration?: number }).duration ?? 3_600_000; // koa-ratelimit's default: an hour
      for (let i = 0; i < 5; i++) {
        const [a, b] = [await theirs.get().set('x-user', 'ann'), await mine.get().set('x-user', 'ann')];
        if (i === 0) firstAnsweredAt = Date.now() + 1;
        // The reset is the window's end in whole seconds: the same for both, unless a second turned
        // while the two first requests were served (on a busy machine, even after clearOfASecondTurn),
        // when each may end in either of the two seconds.
        const [theirsReset, mineReset] = [seen(a).headers['x-ratelimit-reset'], seen(b).headers['x-ratelimit-reset']];
        expect(mineReset === undefined).toBe(theirsReset === undefined);
        if (theirsReset !== undefined) {
          const [earliest, latest] = [Math.floor((firstSentAt + durationMs) / 1_000), Math.floor((firstAnsweredAt + durationMs) / 1_000)];
          for (const reset of [theirsReset, mineReset]) expect(Number(reset)).toBeGreaterThanOrEqual(earliest);
          for (const reset of [theirsReset, mineReset]) expect(Number(reset)).toBeLessThanOrEqual(latest);
          if (earliest === latest) expect(mineReset).toBe(theirsReset);
        }
        // Retry-After is whole seconds left, truncated: it turns each time a whole second of the window
        // has passed, and the two middlewares are asked a few ms apart, so it may differ by one.
        const [theirsSeen, mineSeen] = [seen(a), seen(b)];
        const [theirsAfter, mineAfter] = [theirsSeen.headers['retry-after'], mineSeen.headers['retry-after']];
        expect(mineAfter === undefined).toBe(theirsAfter === undefined);
        if (theirsAfter !== undefined) expect(Math.abs(Number(mineAfter) - Number(theirsAfter))).toBeLessThanOrEqual(1);
        for (const name of ['retry-after', 'x-ratelimit-reset']) {
          delete theirsSeen.headers[name];
          delete mineSeen.headers[name];
        }
        expect(mineSeen).toEqual(theirsSeen);
      }
      expect(mine.seen.handled).toBe(theirs.seen.handled);
    });
  });

  it('sets the header values as koa-ratelimit does on this Koa (numbers on Koa 3, strings on Koa 2), seen by a later middleware', async () => {
    const values = (limiter: Koa.Middleware) => {
      const app = new App();
      const got: unknown[] = [];
      app.use(limiter);
      app.use((ctx) => {
        got.push(ctx.response.get('X-RateLimit-Limit'), ctx.response.get('X-RateLimit-Remaining'), typeof ctx.response.get('X-RateLimit-Reset'));
        ctx.body = 'ok';
      });
      return { get: () => request(app.callback()).get('/'), got };
    };
    const theirs = values(upstream({ driver: 'memory', db: new Map(), max: 3 }));
    const mine = values(ours({ driver: 'memory', db: new Map(), max: 3 }));
    for (let i = 0; i < 2; i++) {
      await theirs.get();
      await mine.get();
    }
    expect(mine.got).toEqual(theirs.got);
  });

  it('answers as koa-ratelimit when two header names are the same (the object form of ctx.set keeps one)', async () => {
    const options = { driver: 'memory', max: 1, headers: { remaining: 'X-Same', reset: 'X-Same', total: 'X-Total' } };
    const theirs = harness(App, upstream({ ...options, db: new Map() }));
    const mine = harness(App, ours({ ...options, db: new Map() }));
    for (let i = 0; i < 3; i++) {
      const [a, b] = [await theirs.get(), await mine.get()];
      expect(seen(b, 'x-same')).toEqual(seen(a, 'x-same'));
    }
  });

  describe('the default refusal', () => {
    // Only Date is faked: the clock stands still unless moved, and supertest's own timers run.
    beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: [...REAL_TIMERS] }));
    afterEach(() => jest.useRealTimers());

    it('is 429 `Rate limit exceeded, retry in <ms long>.` (ms rounded by the ms package), with Retry-After in whole seconds, truncated', async () => {
      const { get } = harness(App, ours({ driver: 'memory', db: new Map(), max: 1, duration: 60_000 }));
      const admitted = await get().expect(200).expect('X-RateLimit-Remaining', '0').expect('X-RateLimit-Limit', '1');
      expect(admitted.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 60));
      jest.setSystemTime(T0 + 30_500);
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(refused.text).toBe('Rate limit exceeded, retry in 30 seconds.');
      expect(refused.headers['retry-after']).toBe('29');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      jest.setSystemTime(T0 + 59_600);
      const last = await get();
      expect([last.text, last.headers['retry-after']]).toEqual(['Rate limit exceeded, retry in 400 ms.', '0']);
    });

    it("puts koa-ratelimit's { after, headers, id, message } on ctx.state.rateLimit, and nothing on admitted requests", async () => {
      const { get, seen: s } = harness(App, ours({ db: new Map(), max: 1, duration: 10_000, id: () => 'ann' }));
      await get();
      jest.setSystemTime(T0 + 1);
      await get();
      expect(s.states[0]).toBeUndefined();
      expect(s.states[1]).toEqual({
        after: 9,
        headers: { 'X-RateLimit-Remaining': 0, 'X-RateLimit-Reset': T0 / 1000 + 10, 'X-RateLimit-Limit': 1 },
        id: 'ann',
        message: 'Rate limit exceeded, retry in 10 seconds.',
      });
    });

    it('with `throw`, is thrown with the headers and Retry-After on the error, for Koa or the app to answer', async () => {
      const errors: Array<{ status: number; message: string; headers: Record<string, unknown> }> = [];
      const app = new App();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          errors.push(error as never);
          throw error;
        }
      });
      app.on('error', () => {});
      app.use(ours({ db: new Map(), max: 1, duration: 5_000, throw: true }));
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      await request(app.callback()).get('/').expect(200);
      jest.setSystemTime(T0 + 1);
      const res = await request(app.callback()).get('/');
      expect([res.status, res.text, res.headers['x-ratelimit-remaining'], res.headers['retry-after']]).toEqual([429, 'Rate limit exceeded, retry in 5 seconds.', '0', '4']);
      expect(errors[0]).toMatchObject({ status: 429, message: 'Rate limit exceeded, retry in 5 seconds.', headers: { 'X-RateLimit-Remaining': 0, 'X-RateLimit-Limit': 1, 'Retry-After': 4 } });
    });
  });

  describe('the memory driver', () => {
    it("keeps koa-ratelimit's entries in the db Map, so db.clear() resets every count", async () => {
      const db = new Map();
      const { get } = harness(App, ours({ driver: 'memory', db, max: 2, id: () => 'ann' }));
      await get().expect(200);
      await get().expect(200);
      await get().expect(429);
      const entry = db.get('limit:ann') as MemoryEntry;
      expect(entry).toEqual({ id: 'ann', reset: expect.any(Number), remaining: 0, total: 2 });
      db.clear();
      await get().expect(200);
    });

    it('shares counts with koa-ratelimit on one Map (same keys, same entries)', async () => {
      const db = new Map();
      const theirs = harness(App, upstream({ driver: 'memory', db, max: 3 }));
      const mine = harness(App, ours({ driver: 'memory', db, max: 3 }));
      const statuses = [];
      for (const app of [theirs, mine, theirs, mine, theirs]) statuses.push((await app.get()).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    });

    it('keeps state without a db (koa-ratelimit builds a new Map per request there, and never limits)', async () => {
      const { get } = harness(App, ours({ driver: 'memory', max: 1 }));
      await get().expect(200);
      await get().expect(429);
    });

    it('holds at most maxKeys keys: past it, one sweep drops to 90 %, oldest windows first among equals', async () => {
      const db = new Map();
      const { app } = harness(App, ours({ db, max: 1, maxKeys: 10, id: (ctx: Koa.Context) => ctx.get('x-user') }));
      for (let user = 0; user < 11; user++) await request(app.callback()).get('/').set('x-user', String(user)).expect(200);
      expect([...db.keys()]).toEqual(['limit:2', 'limit:3', 'limit:4', 'limit:5', 'limit:6', 'limit:7', 'limit:8', 'limit:9', 'limit:10']);
      await request(app.callback()).get('/').set('x-user', '10').expect(429);
    });

    it('a key flood cannot hand a refused key a new window: it outlives 10 x maxKeys one-request keys', () => {
      const db = new Map<unknown, unknown>();
      const maxKeys = 1_000;
      const driver = new MemoryDriver(db, 5, 60_000, maxKeys, () => 1_000_000);
      for (let i = 0; i < 5; i++) driver.get('limit:victim', 'victim');
      expect(driver.get('limit:victim', 'victim').remaining).toBe(0); // refused
      for (let i = 0; i < 10 * maxKeys; i++) driver.get(`limit:flood-${i}`, `flood-${i}`);
      expect(db.size).toBeLessThanOrEqual(maxKeys);
      expect(driver.get('limit:victim', 'victim').remaining).toBe(0); // still refused, same window
    });

    it('drops ended windows before any open one', () => {
      let nowMs = 0;
      const db = new Map<unknown, unknown>();
      const driver = new MemoryDriver(db, 5, 1_000, 10, () => nowMs);
      for (let i = 0; i < 5; i++) driver.get(`limit:old-${i}`, i);
      nowMs = 2_000; // the five old windows have ended
      for (let i = 0; i < 6; i++) driver.get(`limit:new-${i}`, i);
      // 11 keys > 10: the sweep drops to 9, taking the two oldest ended windows and no open one.
      expect([...db.keys()]).toEqual(['limit:old-2', 'limit:old-3', 'limit:old-4', ...[0, 1, 2, 3, 4, 5].map((i) => `limit:new-${i}`)]);
    });

    it('opens a new window once the old one has ended', async () => {
      // Only Date is faked: the 40 ms window ends when the test moves the clock, not when a busy
      // machine gets round to the second request (on the real clock, one 40 ms stall let it in).
      jest.useFakeTimers({ now: T0, doNotFake: [...REAL_TIMERS] });
      try {
        const db = new Map();
        const { get } = harness(App, ours({ db, max: 1, duration: 40, id: () => 'ann' }));
        await get().expect(200);
        await get().expect(429);
        jest.setSystemTime(T0 + 39);
        await get().expect(429);
        jest.setSystemTime(T0 + 41);
        await get().expect(200);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe("per request, in koa-ratelimit's order", () => {
    it('calls id, then whitelist, then blacklist; blacklisted → 403 even when whitelisted', async () => {
      const calls: string[] = [];
      const { get, seen: s } = harness(
        App,
        ours({
          db: new Map(),
          id: () => (calls.push('id'), 'ann'),
          whitelist: async () => (calls.push('whitelist'), true),
          blacklist: () => (calls.push('blacklist'), true),
        }),
      );
      await get().expect(403, 'Forbidden');
      expect(calls).toEqual(['id', 'whitelist', 'blacklist']);
      expect(s.handled).toBe(0);
    });

    it('passes whitelisted requests and id → false uncounted and without headers', async () => {
      const db = new Map();
      const { get } = harness(App, ours({ db, max: 1, whitelist: (ctx: Koa.Context) => ctx.get('x-admin') === 'yes' }), ours({ db, namespace: 'b', max: 1, id: () => false }));
      for (let i = 0; i < 3; i++) {
        const res = await get().set('x-admin', 'yes').expect(200);
        expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
      }
      expect(db.size).toBe(0);
    });

    it('fails the request (500) when id returns no key, as koa-ratelimit does', async () => {
      const { get, seen: s } = harness(App, ours({ db: new Map(), id: () => '' }));
      await get().expect(500);
      expect(s.errors).toHaveLength(1);
    });
  });

  describe('onLimited', () => {
    it('is called with ctx on refusals, after status, body and headers, and may change the response', async () => {
      const { get } = harness(App, ours({ db: new Map(), max: 1, onLimited: (ctx: Koa.Context) => void (ctx.body = { limited: ctx.status }) }));
      await get().expect(200);
      await get().expect(429, { limited: 429 });
    });

    it("reports a rejection it returns on the app's error event (koa-ratelimit leaves an unhandled rejection)", async () => {
      const { get, seen: s } = harness(App, ours({ db: new Map(), max: 1, onLimited: async () => Promise.reject(new Error('audit log down')) }));
      await get().expect(200);
      await get().expect(429);
      await new Promise((resolve) => setImmediate(resolve));
      expect(s.errors).toEqual([new Error('audit log down')]);
    });
  });
});

describe('mode', () => {
  it('is koa-ratelimit mode with only its options, and warns about options it does not know', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const middleware = ratelimit({ db: new Map(), onLimit: () => {} } as never);
      expect('limiter' in middleware).toBe(false);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('`onLimit`'), expect.objectContaining({ code: 'RATEKIT_KOA_UNKNOWN_OPTION' }));
    } finally {
      warn.mockRestore();
    }
  });

  it.each([
    ['algorithm', { algorithm: 'gcra' }],
    ['standardHeaders', { standardHeaders: 'draft-8' }],
    ['now', { now: Date.now }],
  ])('is ratekit mode as soon as a ratekit option is given (%s)', (_name, extra) => {
    expect(ratelimit({ max: 1, ...(extra as object) })).toHaveProperty('limiter');
  });

  it.each([
    [{ driver: 'redis' }, 'db'],
    [{ driver: 'redis', db: new Map() }, 'db'],
    [{ driver: 'memory', db: {} }, 'db'],
    [{ driver: 'mongo' }, 'driver'],
    [{ storeTimeoutMs: 0 }, 'storeTimeoutMs'],
    [{ maxKeys: 0 }, 'maxKeys'],
  ])('refuses a driver that cannot work when built (%j; koa-ratelimit fails every request)', (options, option) => {
    expect(() => ratelimit(options as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }));
  });
});
