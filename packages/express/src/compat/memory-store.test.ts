import { MemoryStore as ErlMemoryStore } from 'express-rate-limit';
import { attachValidations, MemoryStore, syncCounter } from './memory-store.js';
import { createValidations } from './validations.js';

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

  it('keeps at most maxKeys keys, dropping the least recently used', async () => {
    const store = new MemoryStore({ maxKeys: 2, now: () => T0 });
    store.init({ windowMs: 60_000 });
    await store.increment('a');
    await store.increment('b');
    await store.increment('c');
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('c')).toMatchObject({ totalHits: 1 });
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
