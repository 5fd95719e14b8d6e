import { RateKitOptionError } from '@ratekit/core';
import express5 from 'express';
import { MemoryStore as ErlMemoryStore, rateLimit as erlRateLimit } from 'express-rate-limit';
import request from 'supertest';
import { attachValidations, MemoryStore, syncCounter } from './memory-store.js';
import { createValidations } from './validations.js';
import { rateLimit } from '../rate-limit.js';

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

function storeAt(windowMs = 60_000) {
  const clock = { t: T0 };
  const store = new MemoryStore({ now: () => clock.t });
  store.init({ windowMs });
  return { store, clock };
}

describe('MemoryStore', () => {
  describe('a window of 60 s', () => {
    // timeline: ms from T0, operation, then the hits and reset time answered.
    const timeline: Array<[number, 'increment' | 'decrement' | 'get', number | undefined, number | undefined]> = [
      [0, 'get', undefined, undefined], // unknown key
      [0, 'increment', 1, 60_000], // the window starts at the first hit
      [10_000, 'increment', 2, 60_000],
      [20_000, 'increment', 3, 60_000],
      [20_000, 'decrement', undefined, undefined],
      [30_000, 'get', 2, 60_000],
      [59_999, 'increment', 3, 60_000],
      [60_000, 'get', undefined, undefined], // the window has ended
      [60_000, 'increment', 1, 120_000], // a new window from this hit
    ];

    it('counts hits per key in a fixed window that starts at the key’s first hit', async () => {
      const { store, clock } = storeAt();
      const seen: Array<[number, string, number | undefined, number | undefined]> = [];
      for (const [at, operation] of timeline) {
        clock.t = T0 + at;
        const answer = await store[operation]('203.0.113.7');
        const info = answer as { totalHits: number; resetTime: Date } | undefined;
        seen.push([at, operation, info?.totalHits, info === undefined ? undefined : info.resetTime.getTime() - T0]);
      }
      expect(seen).toEqual(timeline);
    });
  });

  it('keeps keys apart', async () => {
    const { store } = storeAt();
    await store.increment('a');
    await store.increment('a');
    expect(await store.increment('b')).toMatchObject({ totalHits: 1 });
  });

  it('never counts below zero', async () => {
    const { store } = storeAt();
    await store.increment('a');
    await store.decrement('a');
    await store.decrement('a');
    expect(await store.increment('a')).toMatchObject({ totalHits: 1 });
  });

  it('answers { totalHits: 0, resetTime } for a key decremented to zero while its window is open, as express-rate-limit does', async () => {
    const { store, clock } = storeAt();
    await store.increment('a');
    clock.t = T0 + 10_000;
    await store.decrement('a');
    expect(await store.get('a')).toEqual({ totalHits: 0, resetTime: new Date(T0 + 60_000) });
    clock.t = T0 + 60_000;
    expect(await store.get('a')).toBeUndefined();
  });

  it('answers { totalHits: 0 } for an unknown key once decremented (express-rate-limit creates it), until a window later', async () => {
    const { store, clock } = storeAt();
    await store.decrement('ghost');
    expect(await store.get('ghost')).toEqual({ totalHits: 0, resetTime: new Date(T0 + 60_000) });
    clock.t = T0 + 60_000;
    expect(await store.get('ghost')).toBeUndefined();
  });

  it('matches express-rate-limit’s MemoryStore on get after a decrement to zero', async () => {
    const { store } = storeAt();
    const theirs = new ErlMemoryStore();
    theirs.init({ windowMs: 60_000 } as never);
    try {
      for (const s of [store, theirs]) {
        await s.increment('k');
        await s.decrement('k');
      }
      expect((await store.get('k'))?.totalHits).toBe(0);
      expect((await theirs.get('k'))?.totalHits).toBe(0);
    } finally {
      theirs.shutdown();
    }
  });

  it('resetKey forgets one key, resetAll every key', async () => {
    const { store } = storeAt();
    await store.increment('a');
    await store.increment('b');
    await store.resetKey('a');
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toMatchObject({ totalHits: 1 });
    await store.resetAll();
    expect(await store.get('b')).toBeUndefined();
  });

  it('answers with promises, as express-rate-limit’s does, and declares localKeys', async () => {
    const { store } = storeAt();
    expect(store.increment('a')).toBeInstanceOf(Promise);
    expect(store.get('a')).toBeInstanceOf(Promise);
    expect(store.localKeys).toBe(true);
    expect(store.windowMs).toBe(60_000);
  });

  it('gives the middleware a synchronous counter on the same state', async () => {
    const { store } = storeAt();
    const counter = syncCounter(store)!;
    expect(counter.increment('a')).toMatchObject({ totalHits: 1 });
    expect(await store.increment('a')).toMatchObject({ totalHits: 2 });
    counter.decrement('a');
    expect(await store.get('a')).toMatchObject({ totalHits: 1 });
    expect(syncCounter(new ErlMemoryStore())).toBeUndefined();
  });

  describe('bounded by maxKeys', () => {
    /** A store of at most `maxKeys` clients at T0 whose limiter refuses above `limit` (a function: unknown to the store). */
    function bounded(maxKeys: number, limit: number | (() => number) = 5, windowMs = 60_000) {
      const clock = { t: T0 };
      const store = new MemoryStore({ maxKeys, now: () => clock.t });
      store.init({ windowMs, limit });
      const size = () => store.current.size + store.previous.size;
      return { store, clock, size };
    }
    async function hit(store: MemoryStore, key: string, times: number) {
      for (let i = 0; i < times; i++) await store.increment(key);
    }
    afterEach(() => jest.useRealTimers());

    it('holds 100 000 keys by default, and refuses a maxKeys that is not an integer >= 1', () => {
      expect(new MemoryStore().maxKeys).toBe(100_000);
      expect(new MemoryStore({ maxKeys: 3 }).maxKeys).toBe(3);
      for (const maxKeys of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10']) {
        expect(() => new MemoryStore({ maxKeys: maxKeys as number })).toThrow(RateKitOptionError);
      }
    });

    it('drops a client whose window has ended first, then previous by fewest hits, then current by fewest hits, a refused one last', async () => {
      jest.useFakeTimers({ now: T0 });
      const clock = { t: T0 };
      const store = new MemoryStore({ maxKeys: 5, now: () => clock.t });
      store.init({ windowMs: 60_000, limit: 5 });
      await hit(store, 'ended', 1); // window T0 .. T0+60 s
      clock.t = T0 + 30_000;
      jest.advanceTimersByTime(30_000);
      await hit(store, 'prev-3', 3);
      await hit(store, 'prev-1', 1);
      jest.advanceTimersByTime(30_000); // rotation: all three in previous
      clock.t = T0 + 60_000;
      expect([...store.previous.keys()]).toEqual(['ended', 'prev-3', 'prev-1']);
      await hit(store, 'refused', 6);
      await hit(store, 'cur-2', 2);
      const gone: string[] = [];
      const known = new Set(['ended', 'prev-3', 'prev-1', 'refused', 'cur-2']);
      for (let i = 0; i < 4; i++) {
        await hit(store, `new-${i}`, 1 + (i === 0 ? 1 : 0)); // new-0 has 2 hits, the others 1
        for (const key of known)
          if (!store.current.has(key) && !store.previous.has(key)) {
            gone.push(key);
            known.delete(key);
          }
        known.add(`new-${i}`);
        expect(store.current.size + store.previous.size).toBe(5);
      }
      // Then a client of current with the fewest hits: a one-hit newcomer, never cur-2 or new-0 (2 hits).
      expect(gone.slice(0, 3)).toEqual(['ended', 'prev-1', 'prev-3']);
      expect(gone[3]).toMatch(/^new-[12]$/);
      expect(gone).toHaveLength(4);
      expect(await store.get('cur-2')).toMatchObject({ totalHits: 2 });
      expect(await store.get('refused')).toMatchObject({ totalHits: 6 });
      store.shutdown();
    });

    it('drops a refused client only when every client held is refused: the one whose window ends first', async () => {
      const { store, clock } = bounded(2, 0);
      await hit(store, 'a', 1);
      clock.t += 1_000;
      await hit(store, 'b', 1);
      await hit(store, 'c', 1); // limit 0: every client is refused
      expect(await store.get('a')).toBeUndefined();
      expect(await store.get('b')).toMatchObject({ totalHits: 1 });
      store.shutdown();
    });

    for (const [known, limit] of [
      ['a numeric limit (refused clients go last)', 5],
      ['a limit function (fewest hits first, in either generation)', () => 5],
    ] as const) {
      it(`a flood of 10 x maxKeys one-request keys does not reset a refused key, in current or previous, with ${known}`, async () => {
        jest.useFakeTimers({ now: T0 });
        const maxKeys = 1_000;
        const clock = { t: T0 };
        const store = new MemoryStore({ maxKeys, now: () => clock.t });
        store.init({ windowMs: 60_000, limit });
        clock.t = T0 + 20_000;
        await hit(store, 'in-previous', 6); // its window: until T0 + 80 s
        jest.advanceTimersByTime(60_000); // rotation at T0 + 60 s
        clock.t = T0 + 60_000;
        expect(store.previous.has('in-previous')).toBe(true);
        await hit(store, 'in-current', 6);
        let largest = 0;
        for (let i = 0; i < 10 * maxKeys; i++) {
          await store.increment(`flood-${i}`);
          largest = Math.max(largest, store.current.size + store.previous.size);
        }
        expect(largest).toBeLessThanOrEqual(maxKeys);
        expect(store.previous.get('in-previous')).toMatchObject({ totalHits: 6, resetTime: new Date(T0 + 80_000) });
        expect(await store.increment('in-current')).toMatchObject({ totalHits: 7, resetTime: new Date(T0 + 120_000) });
        expect(await store.increment('in-previous')).toMatchObject({ totalHits: 7, resetTime: new Date(T0 + 80_000) });
        store.shutdown();
      });
    }

    it('through the limiter: a key flood does not lift a refused key’s 429 (the store learns the limit from init)', async () => {
      const store = new MemoryStore({ maxKeys: 20 });
      const app = express5();
      app.use(rateLimit({ limit: 2, store, keyGenerator: (req) => String(req.get('x-key')), validate: false }));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      for (let i = 0; i < 3; i++) await request(app).get('/').set('x-key', 'attacker');
      for (let i = 0; i < 200; i++) await request(app).get('/').set('x-key', `flood-${i}`);
      expect(store.current.size + store.previous.size).toBeLessThanOrEqual(20);
      expect((await request(app).get('/').set('x-key', 'attacker')).status).toBe(429);
      store.shutdown();
    });

    it('trips none of express-rate-limit’s validations, with its limiter or ours', async () => {
      for (const limiter of [erlRateLimit, rateLimit as unknown as typeof erlRateLimit]) {
        const logged: unknown[] = [];
        const logger = { warn: (...a: unknown[]) => logged.push(a), error: (...a: unknown[]) => logged.push(a) };
        const store = new MemoryStore({ maxKeys: 10 });
        const app = express5();
        app.use(limiter({ windowMs: 60_000, limit: 2, store, logger }));
        app.get('/', (_req, res) => {
          res.send('ok');
        });
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await request(app).get('/')).status);
        expect(statuses).toEqual([200, 200, 429]);
        expect(logged).toEqual([]);
        store.shutdown();
      }
    });
  });

  describe('generations, as express-rate-limit’s', () => {
    afterEach(() => jest.useRealTimers());

    it('rotates current into previous every windowMs on an unref’d interval that shutdown clears', async () => {
      jest.useFakeTimers({ now: T0 });
      const cleared = jest.spyOn(global, 'clearInterval');
      const store = new MemoryStore();
      expect(store.interval).toBeUndefined();
      store.init({ windowMs: 1_000 });
      const timer = store.interval as unknown as { hasRef?: () => boolean };
      expect(timer).toBeDefined();
      await store.increment('a');
      expect([store.current.has('a'), store.previous.has('a')]).toEqual([true, false]);
      jest.advanceTimersByTime(1_000);
      expect([store.current.has('a'), store.previous.has('a')]).toEqual([false, true]);
      expect(await store.get('a')).toBeUndefined(); // its window ended with the rotation
      jest.advanceTimersByTime(1_000);
      expect(store.previous.size + store.current.size).toBe(0);
      store.shutdown();
      expect(cleared).toHaveBeenCalledWith(store.interval);
      cleared.mockRestore();
    });

    it('leaves the real timer unref’d, so it never keeps the process alive', () => {
      const store = new MemoryStore();
      store.init({ windowMs: 60_000 });
      expect((store.interval as unknown as { hasRef(): boolean }).hasRef()).toBe(false);
      store.shutdown();
    });

    it('keeps a window longer than setInterval allows whole across rotations', async () => {
      jest.useFakeTimers({ now: T0 });
      const store = new MemoryStore();
      store.init({ windowMs: 100 * 24 * 3_600_000 }); // 100 days; the timer runs every 2^31 - 1 ms
      await store.increment('a');
      jest.advanceTimersByTime(3 * (2 ** 31 - 1));
      expect(await store.increment('a')).toMatchObject({ totalHits: 2, resetTime: new Date(T0 + 100 * 24 * 3_600_000) });
      store.shutdown();
    });

    it('answers every call, and holds the same keys in each generation, as express-rate-limit’s, across rotations', async () => {
      jest.useFakeTimers({ now: T0 });
      const ours = new MemoryStore();
      const theirs = new ErlMemoryStore() as unknown as MemoryStore;
      ours.init({ windowMs: 1_000 });
      theirs.init({ windowMs: 1_000 });
      const steps: Array<[number, 'increment' | 'decrement' | 'get' | 'resetKey', string]> = [
        [0, 'increment', 'a'],
        [300, 'increment', 'b'],
        [300, 'decrement', 'ghost'],
        [700, 'increment', 'a'],
        [1_100, 'get', 'b'],
        [1_200, 'increment', 'b'],
        [1_250, 'decrement', 'b'],
        [1_300, 'get', 'a'],
        [1_500, 'increment', 'c'],
        [2_050, 'get', 'c'],
        [2_100, 'increment', 'a'],
        [2_200, 'resetKey', 'c'],
        [3_400, 'increment', 'b'],
        [3_400, 'get', 'ghost'],
      ];
      const snapshot = async (store: MemoryStore, operation: (typeof steps)[number][1], key: string) => {
        const answer = (await store[operation](key)) as object | undefined;
        return { answer: answer === undefined ? undefined : { ...answer }, current: [...store.current.keys()], previous: [...store.previous.keys()] };
      };
      let at = 0;
      for (const [when, operation, key] of steps) {
        jest.advanceTimersByTime(when - at);
        at = when;
        expect(await snapshot(ours, operation, key)).toEqual(await snapshot(theirs, operation, key));
      }
      ours.shutdown();
      theirs.shutdown();
    });
  });

  describe('with an unusable windowMs', () => {
    it('reports ERR_ERL_WINDOW_MS (when the limiter made it) and counts in a 1 ms window', async () => {
      const logged: string[] = [];
      const clock = { t: T0 };
      const store = new MemoryStore({ now: () => clock.t });
      attachValidations(store, createValidations(true, { warn: () => undefined, error: (e) => logged.push((e as { code: string }).code) }));
      store.init({ windowMs: 0 });
      expect(logged).toEqual(['ERR_ERL_WINDOW_MS']);
      expect(await store.increment('a')).toMatchObject({ totalHits: 1 });
      clock.t += 1;
      expect(await store.increment('a')).toMatchObject({ totalHits: 1 });
    });

    it('treats an infinite window as one that never ends', async () => {
      const clock = { t: T0 };
      const store = new MemoryStore({ now: () => clock.t });
      store.init({ windowMs: Number.POSITIVE_INFINITY });
      await store.increment('a');
      clock.t += 10 * 365 * 24 * 3_600_000;
      expect(await store.increment('a')).toMatchObject({ totalHits: 2 });
    });
  });

  describe('against express-rate-limit’s MemoryStore', () => {
    beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['setInterval', 'clearInterval', 'nextTick', 'setImmediate', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    it('answers every call of a schedule the same way', async () => {
      const ours = new MemoryStore();
      const theirs = new ErlMemoryStore();
      ours.init({ windowMs: 1_000 });
      theirs.init({ windowMs: 1_000 } as never);
      const schedule: Array<[number, 'increment' | 'decrement' | 'get' | 'resetKey', string]> = [
        [0, 'increment', 'a'],
        [0, 'increment', 'a'],
        [100, 'increment', 'b'],
        [500, 'decrement', 'a'],
        [600, 'get', 'a'],
        [999, 'increment', 'a'],
        [1_000, 'get', 'a'],
        [1_000, 'increment', 'a'],
        [1_050, 'get', 'b'],
        [1_100, 'resetKey', 'a'],
        [1_100, 'get', 'a'],
        [1_200, 'increment', 'a'],
      ];
      const answers: Array<[unknown, unknown]> = [];
      for (const [at, operation, key] of schedule) {
        jest.setSystemTime(T0 + at);
        const normalise = (v: unknown) => (v === undefined ? undefined : { ...(v as object) });
        answers.push([normalise(await ours[operation](key)), normalise(await theirs[operation](key))]);
      }
      for (const [mine, reference] of answers) expect(mine).toEqual(reference);
      ours.shutdown();
      theirs.shutdown();
    });
  });
});
