import fc from 'fast-check';
import pg from 'pg';
import { encodeText, isIdentifier, quoteIdentifier } from './quote.js';

describe('quoteIdentifier', () => {
  it.each(['ratekit', 'Mixed Case', 'with "quotes"', '"', 'x"; DROP TABLE y; --', 'é€😀', 'a.b'])('quotes %j exactly as pg.escapeIdentifier does', (name) => {
    expect(quoteIdentifier(name)).toBe(pg.escapeIdentifier(name));
  });

  it('agrees with pg.escapeIdentifier on any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (name) => quoteIdentifier(name) === pg.escapeIdentifier(name)));
  });
});

describe('isIdentifier', () => {
  it.each([
    ['a name', 'ratekit', 0, true],
    ['63 bytes', 'x'.repeat(63), 0, true],
    ['64 bytes (PostgreSQL would truncate it)', 'x'.repeat(64), 0, false],
    ['48 bytes plus a 15-byte suffix', 'x'.repeat(48), 15, true],
    ['49 bytes plus a 15-byte suffix', 'x'.repeat(49), 15, false],
    ['multi-byte characters counted in bytes', 'é'.repeat(32), 0, false],
    ['empty', '', 0, false],
    ['a NUL', 'a\u0000b', 0, false],
    ['not a string', 42, 0, false],
  ])('%s → %s', (_, name, suffix, expected) => {
    expect(isIdentifier(name, suffix)).toBe(expected);
  });
});

describe('encodeText', () => {
  describe('on the strings keys are made of', () => {
    it.each(['203.0.113.7', 'user:42', '2001:db8::/64', 'é€😀', ''])('leaves %j as it is', (key) => {
      expect(encodeText(key)).toBe(key);
    });
  });

  describe('on what PostgreSQL text cannot hold', () => {
    it.each([
      ['a NUL', 'a\u0000b', 'a\\0b'],
      ['the escape character', 'a\\b', 'a\\\\b'],
      ['a lone high surrogate', 'a\uD83D', 'a\\uD83D'],
      ['a lone low surrogate', '\uDE00z', '\\uDE00z'],
      ['a look-alike of an escape', '\\0', '\\\\0'],
    ])('escapes %s', (_, key, stored) => {
      expect(encodeText(key)).toBe(stored);
    });

    it('keeps a well-formed surrogate pair as it is', () => {
      expect(encodeText('\uD83D\uDE00')).toBe('😀');
    });
  });

  it('is injective, and its output is always valid PostgreSQL text (no NUL, no lone surrogate)', () => {
    const alphabet = fc.constantFrom('a', '\\', '0', 'u', 'D', '8', '\u0000', '\uD800', '\uDC00', '\uD83D', '\uDE00', '😀');
    const text = fc.array(alphabet, { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const ea = encodeText(a);
        expect(ea.includes('\u0000')).toBe(false);
        expect(Buffer.from(ea, 'utf8').toString('utf8')).toBe(ea);
        if (a !== b) expect(ea).not.toBe(encodeText(b));
      }),
      { numRuns: 2_000 },
    );
  });
});
