import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sha256 } from './sha256.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('sha256', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
  ])('gives FIPS 180-4’s example digest of %j', (text, digest) => {
    expect(hex(sha256(utf8(text)))).toBe(digest);
  });

  it('agrees with node:crypto on any string, across block boundaries (55, 56, 64 bytes) and non-ASCII text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.integer({ min: 50, max: 130 }).map((n) => 'x'.repeat(n)),
        ),
        (text) => {
          expect(hex(sha256(utf8(text)))).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
        },
      ),
      { numRuns: 500 },
    );
  });
});
