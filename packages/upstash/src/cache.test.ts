import { ephemeralCache } from './cache.js';

describe('ephemeralCache', () => {
  it('blocks until the reset instant, inclusive, then forgets the identifier', () => {
    let now = 1_000;
    const map = new Map<string, number>();
    const cache = ephemeralCache(map, () => now);
    expect(cache.isBlocked('a')).toEqual({ blocked: false, reset: 0 });
    cache.blockUntil('a', 2_000);
    expect(cache.isBlocked('a')).toEqual({ blocked: true, reset: 2_000 });
    now = 2_000;
    expect(cache.isBlocked('a')).toEqual({ blocked: true, reset: 2_000 });
    now = 2_001;
    expect(cache.isBlocked('a')).toEqual({ blocked: false, reset: 0 });
    expect(map.has('a')).toBe(false);
  });

  it('counts in the Map, and reads a count of 0 as absent', () => {
    const map = new Map<string, number>();
    const cache = ephemeralCache(map, () => 0);
    expect(cache.get('k')).toBeNull();
    expect(cache.incr('k')).toBe(1);
    expect(cache.incr('k', 4)).toBe(5);
    expect(cache.get('k')).toBe(5);
    cache.set('k', 0);
    expect(cache.get('k')).toBeNull();
    cache.set('j', 3);
    expect(cache.size()).toBe(2);
    cache.pop('j');
    expect([...map.keys()]).toEqual(['k']);
    cache.empty();
    expect(cache.size()).toBe(0);
  });
});
