import fc from 'fast-check';
import { LruIndex } from './lru';

function index(capacity: number) {
  const evicted: Array<[string, number]> = [];
  const lru: LruIndex<number> = new LruIndex<number>(capacity, (value, key) => {
    evicted.push([key, value]);
    expect(lru.size).toBe(capacity); // told before the new key goes in
  });
  return { lru, evicted };
}

describe('LruIndex', () => {
  it('holds up to capacity keys, then evicts the least recently used one, telling onEvict', () => {
    const { lru, evicted } = index(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(evicted).toEqual([['a', 1]]);
    expect([...lru.rkeys()]).toEqual(['b', 'c']);
    expect(lru.size).toBe(2);
  });

  it('get marks a key most recently used; peek does not', () => {
    const { lru, evicted } = index(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(evicted).toEqual([['b', 2]]);
    expect(lru.peek('a')).toBe(1);
    lru.set('d', 4);
    expect(evicted).toEqual([
      ['b', 2],
      ['a', 1],
    ]);
  });

  it('set of a known key replaces its value and marks it most recently used, evicting nothing', () => {
    const { lru, evicted } = index(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('a', 10);
    expect(evicted).toEqual([]);
    expect([...lru.rkeys()]).toEqual(['b', 'a']);
    expect(lru.get('a')).toBe(10);
  });

  it('delete frees a slot for the next key, and clear empties it', () => {
    const { lru, evicted } = index(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.delete('a')).toBe(true);
    expect(lru.delete('a')).toBe(false);
    lru.set('c', 3);
    expect(evicted).toEqual([]);
    expect([...lru.rkeys()]).toEqual(['b', 'c']);
    lru.clear();
    expect(lru.size).toBe(0);
    expect([...lru.rkeys()]).toEqual([]);
    expect(lru.get('b')).toBeUndefined();
    lru.set('d', 4);
    expect([...lru.rkeys()]).toEqual(['d']);
  });

  it('gives each key a slot of its own until it is deleted or evicted, for data kept beside the index', () => {
    const { lru } = index(2);
    const a = lru.add('a', 1);
    const b = lru.set('b', 2);
    expect(new Set([a, b]).size).toBe(2);
    expect([lru.find('a'), lru.slotOf('b'), lru.find('z'), lru.slotOf('z')]).toEqual([a, b, -1, -1]);
    lru.setValueAt(a, 10);
    expect([lru.valueAt(a), lru.peek('a')]).toEqual([10, 10]);
    expect([...lru.rkeys()]).toEqual(['b', 'a']); // find marked a most recently used; slotOf and setValueAt did not move b
    const slots: number[] = [];
    const evicting = new LruIndex<number>(1, (_value, _key, slot) => slots.push(slot));
    const first = evicting.add('x', 1);
    expect(evicting.add('y', 2)).toBe(first); // the evicted key's slot, handed to onEvict first
    expect(slots).toEqual([first]);
  });

  it('grows its slots as keys arrive, keeping every key, value and the recency order', () => {
    const { lru, evicted } = index(3_000);
    expect(lru.allocated).toBe(1_024);
    for (let i = 0; i < 2_500; i++) lru.set(`k${i}`, i);
    expect(lru.allocated).toBe(3_000); // 1,024 -> 2,048 -> 3,000 (capped at capacity)
    expect(lru.get('k0')).toBe(0); // now the most recently used
    for (let i = 2_500; i < 3_001; i++) lru.set(`k${i}`, i);
    expect(evicted).toEqual([['k1', 1]]);
    const order = [...lru.rkeys()];
    expect(order.slice(0, 2)).toEqual(['k2', 'k3']);
    expect(order.at(-2)).toBe('k2999');
    expect(order.at(-1)).toBe('k3000');
    expect(order.indexOf('k0')).toBe(2_498);
    expect(lru.peek('k1234')).toBe(1_234);
  });

  it('behaves as a Map kept in recency order, for any sequence of operations', () => {
    type Op = { op: 'get' | 'peek' | 'set' | 'delete'; key: string; value: number };
    const op: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom('get', 'peek', 'set', 'set', 'delete'), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), value: fc.integer() });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 80 }), (capacity, ops) => {
        const { lru, evicted } = index(capacity);
        // The model: a Map whose insertion order is the recency order.
        const model = new Map<string, number>();
        const expectedEvicted: Array<[string, number]> = [];
        for (const { op, key, value } of ops) {
          if (op === 'get') {
            const seen = model.get(key);
            if (seen !== undefined) {
              model.delete(key);
              model.set(key, seen);
            }
            expect(lru.get(key)).toBe(seen);
          } else if (op === 'peek') expect(lru.peek(key)).toBe(model.get(key));
          else if (op === 'delete') expect(lru.delete(key)).toBe(model.delete(key));
          else {
            if (!model.has(key) && model.size === capacity) {
              const [oldest, held] = model.entries().next().value as [string, number];
              model.delete(oldest);
              expectedEvicted.push([oldest, held]);
            }
            model.delete(key);
            model.set(key, value);
            lru.set(key, value);
          }
          expect([...lru.rkeys()]).toEqual([...model.keys()]);
          expect(lru.size).toBe(model.size);
        }
        expect(evicted).toEqual(expectedEvicted);
      }),
      { numRuns: 500 },
    );
  });
});
