import { digest, isValidPrefix, KeySpace } from './keys.js';

describe('KeySpace', () => {
  const keys = new KeySpace('rk:');

  describe('item keys', () => {
    it('are the prefix, the digest of (namespace, key), the kind and the digest of the limit id', () => {
      const base = keys.base('api', 'user:1');
      expect(keys.item(base, 'b')).toMatch(/^rk:[A-Za-z0-9_-]{43}\.b$/);
      expect(keys.item(base, 'f', 'fixed-window:minute')).toMatch(/^rk:[A-Za-z0-9_-]{43}\.f\.[A-Za-z0-9_-]{43}$/);
      expect(keys.item(base, 'f', 'fixed-window:minute').startsWith(base.base)).toBe(true);
    });

    it('never coincide for two different (namespace, key) pairs, whatever separators the parts hold', () => {
      const pairs: Array<[string, string]> = [
        ['a', 'b:c'],
        ['a:b', 'c'],
        ['', '1:a:b'],
        ['1:a', 'b'],
        ['a', '\u0000b'],
        ['a\u0000', 'b'],
        ['ab', ''],
        ['', 'ab'],
        ['', '2:ab;0:'],
        // Lone surrogates: UTF-8 would turn both into U+FFFD.
        ['', '\uD800'],
        ['', '\uD801'],
        ['', '\uFFFD'],
      ];
      const bases = pairs.map(([namespace, key]) => keys.base(namespace, key).base);
      expect(new Set(bases).size).toBe(pairs.length);
    });

    it('give each limit id and each kind its own item', () => {
      const base = keys.base('api', 'k');
      const items = [keys.item(base, 'b'), keys.item(base, 'f', 'a'), keys.item(base, 'f', 'b'), keys.item(base, 's0', 'a'), keys.item(base, 's1', 'a')];
      expect(new Set(items).size).toBe(items.length);
    });

    it('route every item of one (namespace, key) the same way, and spread different keys', () => {
      const routes = new Set(Array.from({ length: 200 }, (_, i) => keys.base('api', `user:${i}`).route % 4));
      expect(routes).toEqual(new Set([0, 1, 2, 3]));
      expect(keys.base('api', 'user:1').route).toBe(keys.base('api', 'user:1').route);
    });

    it('stay within 250 bytes of printable ASCII for the longest prefix and any parts', () => {
      const long = new KeySpace('p'.repeat(100));
      const base = long.base('ns '.repeat(1_000), '\r\n'.repeat(10_000));
      for (const key of [long.item(base, 'b'), long.item(base, 's1', 'x'.repeat(5_000))]) {
        expect(Buffer.byteLength(key)).toBeLessThanOrEqual(250);
        expect(key).toMatch(/^[\x21-\x7e]+$/);
      }
    });
  });

  describe('digest', () => {
    it('length-prefixes its parts: ("ab", "") and ("a", "b") differ', () => {
      expect(digest('ab', '')).not.toBe(digest('a', 'b'));
      expect(digest('x')).toBe(digest('x'));
    });
  });
});

describe('isValidPrefix', () => {
  it.each(['', 'ratekit:', 'a'.repeat(100), '!~{}'])('accepts %j', (prefix) => {
    expect(isValidPrefix(prefix)).toBe(true);
  });

  it.each(['has space', 'tab\t', 'new\nline', 'é', 'a'.repeat(101), 42])('refuses %j', (prefix) => {
    expect(isValidPrefix(prefix)).toBe(false);
  });
});
