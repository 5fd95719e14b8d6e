import { resolveLimit } from '../limit';
import { Slots } from './entry';
import { GuardedKeys } from './eviction';
import { budgetLeft, expired, pruneExpired, type SlotLimits } from './expiry';

const T0 = 1_700_000_000_000;
// Fixed windows: a state is [window start ms, used].
const perSecond = resolveLimit({ limit: 4, windowMs: 1_000 });
const perMinute = resolveLimit({ limit: 4, windowMs: 60_000 });
const limits: SlotLimits = { primary: perSecond, bySlot: new Map([['m', perMinute]]) };

describe('expired', () => {
  it('is true once a bare state has expired under the primary limit', () => {
    expect(expired([T0, 1], limits, T0 + 999)).toBe(false);
    expect(expired([T0, 1], limits, T0 + 1_000)).toBe(true);
  });

  it('is false while any slot of a Slots entry still holds state', () => {
    const entry = new Slots([T0, 1]);
    entry.set('m', [T0, 1]);
    expect(expired(entry, limits, T0 + 1_000)).toBe(false);
    expect(expired(entry, limits, T0 + 60_000)).toBe(true);
  });

  it('counts a slot whose limit is unknown as expired', () => {
    const entry = new Slots(undefined);
    entry.set('unknown', [T0, 1]);
    expect(expired(entry, limits, T0)).toBe(true);
  });
});

describe('budgetLeft', () => {
  it('is the share of the budget left, the least over the limits', () => {
    expect(budgetLeft([T0, 1], limits, T0)).toBe(0.75);
    const entry = new Slots([T0, 1]);
    entry.set('m', [T0, 3]);
    expect(budgetLeft(entry, limits, T0)).toBe(0.25);
  });
});

describe('pruneExpired', () => {
  it('drops expired keys from the LRU and from those kept aside, and counts them', () => {
    const held = new Map<string, number[]>([
      ['old', [T0, 1]],
      ['new', [T0 + 500, 1]],
    ]);
    const guarded = new GuardedKeys<Slots | number[]>(10);
    guarded.keep('aside', [T0, 4], 0);
    const lru = { rkeys: () => [...held.keys()], entryOf: (key: string) => held.get(key)!, delete: (key: string) => held.delete(key) };
    expect(pruneExpired(lru, guarded, limits, T0 + 1_000)).toBe(2);
    expect([...held.keys()]).toEqual(['new']);
    expect(guarded.size).toBe(0);
  });

  it('stops after 1 000 live keys in a row, leaving expired keys beyond them', () => {
    const held = new Map<string, number[]>();
    for (let i = 0; i < 1_000; i++) held.set(`live${i}`, [T0 + 500, 1]);
    held.set('expired-but-recent', [T0, 1]);
    const lru = { rkeys: () => [...held.keys()], entryOf: (key: string) => held.get(key)!, delete: (key: string) => held.delete(key) };
    expect(pruneExpired(lru, new GuardedKeys(1), limits, T0 + 1_000)).toBe(0);
    expect(held.has('expired-but-recent')).toBe(true);
  });
});
