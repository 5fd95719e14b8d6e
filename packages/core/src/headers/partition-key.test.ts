import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { partitionKey } from './partition-key';

describe('partitionKey', () => {
  describe('matches express-rate-limit v8 draft-8 pk', () => {
    it.each([
      ['foo', 'MmMyNmI0NmI2OGZm'],
      ['127.0.0.1', 'MTJjYTE3YjQ5YWYy'],
    ])('hashes %p to %p', (key, expected) => {
      expect(partitionKey(key)).toBe(expected);
    });
  });

  it('is the base64 of the ASCII text of the first 12 hex digits of SHA-256(key), not of the hash bytes', () => {
    const key = '2001:db8:1234:5600::/56';
    const hex = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12);
    expect(Buffer.from(partitionKey(key), 'base64').toString('ascii')).toBe(hex);
  });

  it('hashes non-ASCII keys as UTF-8', () => {
    const hex = createHash('sha256').update('usér', 'utf8').digest('hex').slice(0, 12);
    expect(partitionKey('usér')).toBe(Buffer.from(hex, 'ascii').toString('base64'));
  });

  it.each(['', 'a', '203.0.113.7', 'x'.repeat(10_000)])('is 16 base64 characters without padding for %p', (key) => {
    expect(partitionKey(key)).toMatch(/^[A-Za-z0-9+/]{16}$/);
  });

  it('carries 12 hex digits of a hash, never the raw key', () => {
    expect(Buffer.from(partitionKey('203.0.113.7'), 'base64').toString('ascii')).toMatch(/^[0-9a-f]{12}$/);
  });

  it('gives the same value on repeated calls and past the memo size', () => {
    const first = partitionKey('foo');
    for (let i = 0; i < 2_000; i++) partitionKey(`key-${i}`);
    expect(partitionKey('foo')).toBe(first);
    expect(partitionKey('key-3')).toBe(Buffer.from(createHash('sha256').update('key-3').digest('hex').slice(0, 12)).toString('base64'));
  });

  /** partition-key.ts loaded afresh where the runtime has no `process.getBuiltinModule` (an edge runtime): the plain SHA-256. */
  function withoutNodeCrypto(): typeof partitionKey {
    const { getBuiltinModule } = process;
    (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
    let loaded!: typeof partitionKey;
    try {
      jest.isolateModules(() => {
        loaded = (require('./partition-key') as typeof import('./partition-key')).partitionKey;
      });
    } finally {
      process.getBuiltinModule = getBuiltinModule;
    }
    return loaded;
  }

  it('hashes any string as node:crypto does (lone surrogates as U+FFFD), with node:crypto and without it', () => {
    const plain = withoutNodeCrypto();
    expect(plain('foo')).toBe('MmMyNmI0NmI2OGZm');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ maxLength: 300 })), (key) => {
        const hex = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12);
        const expected = Buffer.from(hex, 'ascii').toString('base64');
        expect(partitionKey(key)).toBe(expected);
        expect(plain(key)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});
