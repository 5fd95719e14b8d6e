import { createLimiter } from '../limiter.js';
import { sync } from '../test-support/algorithms.js';
import { GuardedKeys } from './eviction.js';
import { memoryStore } from './memory.js';

describe('GuardedKeys: what the LRU evicts, kept by how close to refused it is', () => {
  it.each([
    [1, false],
    [0.5, false],
    [0.49, true],
    [0.1, true],
    [0, true],
  ])('a key with %p of its budget left is kept: %p', (left, kept) => {
    const guarded = new GuardedKeys<string>(4);
    guarded.keep('k', 'state', left);
    expect(guarded.take('k')).toBe(kept ? 'state' : undefined);
  });

  it('when full, drops the key with the most budget left, the oldest of its level first', () => {
    const guarded = new GuardedKeys<number>(3);
    guarded.keep('refused', 0, 0);
    guarded.keep('low-a', 1, 0.2);
    guarded.keep('half-a', 2, 0.4);
    expect(guarded.keep('low-b', 3, 0.1)).toBe('half-a');
    expect(guarded.keep('low-c', 4, 0.1)).toBe('low-a');
    expect(guarded.keep('half-b', 5, 0.4)).toBe('half-b'); // nothing held has more budget: the newcomer goes
    expect([...guarded.entries()].map(([key]) => key)).toEqual(['refused', 'low-b', 'low-c']);
  });
});

describe('memoryStore under a key flood (a botnet, an IPv6 range)', () => {
  const T0 = 1_700_000_000_000;
  const maxKeys = 1_000;

  /** A limiter of 5 per minute on a store of `maxKeys`, on a fixed clock, with one key refused. */
  function refusedVictim() {
    const store = memoryStore({ maxKeys, pruneIntervalMs: 0 });
    const limiter = createLimiter({ limits: { limit: 5, windowMs: 60_000 }, store, now: () => T0 + 1_000 });
    for (let i = 0; i < 5; i++) expect(limiter.consume('victim')).toMatchObject({ allowed: true });
    expect(limiter.consume('victim')).toMatchObject({ allowed: false });
    return { store, limiter };
  }

  it('a refused key stays refused through 10 × maxKeys one-request keys, and memory stays bounded', () => {
    const { store, limiter } = refusedVictim();
    let largest = 0;
    for (let i = 0; i < 10 * maxKeys; i++) {
      sync(limiter.consume(`flood-${i}`));
      largest = Math.max(largest, store.size);
    }
    expect(limiter.consume('victim')).toMatchObject({ allowed: false, remaining: 0 });
    expect(largest).toBeLessThanOrEqual(maxKeys + maxKeys / 10);
  });

  it('it outlives flood keys that each hold a little state (2 of 5 spent)', () => {
    const { limiter } = refusedVictim();
    for (let i = 0; i < 10 * maxKeys; i++) {
      sync(limiter.consume(`flood-${i}`));
      sync(limiter.consume(`flood-${i}`));
    }
    expect(limiter.consume('victim')).toMatchObject({ allowed: false });
  });

  it('the bound: only ceil(maxKeys / 10) flood keys that have each spent their whole budget push it out', () => {
    const { limiter } = refusedVictim();
    const spendAll = (key: string) => {
      for (let j = 0; j < 5; j++) sync(limiter.consume(key));
    };
    for (let i = 0; i < maxKeys; i++) spendAll(`spent-${i}`); // fills the LRU: the victim is kept aside
    for (let i = 0; i < maxKeys / 10 - 1; i++) spendAll(`more-${i}`); // one short of filling the side store
    expect(limiter.consume('victim')).toMatchObject({ allowed: false });
  });

  it('an evicted key whose window has expired is simply dropped', () => {
    let now = T0;
    const store = memoryStore({ maxKeys: 10, pruneIntervalMs: 0 });
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, now: () => now });
    sync(limiter.consume('old'));
    now += 5_000;
    for (let i = 0; i < 20; i++) sync(limiter.consume(`new-${i}`));
    expect(store.size).toBe(10 + 1); // the LRU plus at most the ceil(10 / 10) kept aside, which 'old' is not
    expect(limiter.peek('old')).toMatchObject({ remaining: 1 });
  });
});
