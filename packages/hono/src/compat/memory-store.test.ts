import { MemoryStore } from './memory-store.js';

describe('MemoryStore (timer-free)', () => {
  const T0 = 1_700_000_000_000;
  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('starts no timer, at construction or in init (a Worker cannot at module scope)', () => {
    const store = new MemoryStore();
    store.init({ windowMs: 1_000 });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('counts per key in a window starting at the first hit, and restarts it after windowMs', () => {
    const store = new MemoryStore();
    store.init({ windowMs: 1_000 });
    expect(store.increment('a').totalHits).toBe(1);
    jest.setSystemTime(T0 + 999);
    expect(store.increment('a')).toEqual({ totalHits: 2, resetTime: new Date(T0 + 1_000) });
    jest.setSystemTime(T0 + 1_000);
    expect(store.increment('a')).toEqual({ totalHits: 1, resetTime: new Date(T0 + 2_000) });
  });

  it('turns the generations as the interval would have: unseen for a window → previous; for two → gone', () => {
    const store = new MemoryStore();
    store.init({ windowMs: 100 });
    store.increment('k');
    jest.setSystemTime(T0 + 100);
    expect([store.current.has('k'), store.previous.has('k')]).toEqual([false, true]);
    jest.setSystemTime(T0 + 200);
    expect([store.current.has('k'), store.previous.has('k'), store.get('k')]).toEqual([false, false, undefined]);
  });

  it('turns both generations at once after a long idle time', () => {
    const store = new MemoryStore();
    store.init({ windowMs: 100 });
    store.increment('k');
    jest.setSystemTime(T0 + 10_050);
    expect(store.get('k')).toBeUndefined();
    store.increment('j');
    jest.setSystemTime(T0 + 10_099); // the turn is aligned on init's clock: still the same generation
    expect(store.current.has('j')).toBe(true);
  });

  it('never decrements below zero, and resetKey / resetAll / shutdown forget', () => {
    const store = new MemoryStore();
    store.init({ windowMs: 1_000 });
    store.decrement('a');
    expect(store.get('a')?.totalHits).toBe(0);
    store.increment('a');
    store.increment('b');
    store.resetKey('a');
    expect(store.get('a')).toBeUndefined();
    store.shutdown();
    expect(store.get('b')).toBeUndefined();
  });
});
