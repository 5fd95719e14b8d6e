import fc from 'fast-check';
import { limits } from '@ratekit/test-utils';
import { decisionProtocol, utf8ByteLength } from './protocol.js';

describe('utf8ByteLength', () => {
  it.each([
    ['', 0],
    ['gcra:perSecond', 14],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
    ['\ud800', 3], // a lone surrogate is written as U+FFFD
  ])('counts %p as %d bytes, as Redis stores it', (text, bytes) => {
    expect(utf8ByteLength(text)).toBe(bytes);
  });

  it("agrees with Buffer.byteLength on any string (the TCP store's former count)", () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => utf8ByteLength(text) === Buffer.byteLength(text)));
  });
});

describe('decisionProtocol', () => {
  it("length-prefixes a limit's id in the script's argument, so a name may hold spaces", () => {
    const { keys, argument } = decisionProtocol('p:', 'caller').encode({
      key: 'k',
      namespace: 'api',
      limits: limits({ name: 'per second', limit: 2, windowMs: 1_000 }),
      cost: 1,
      mode: 'consume',
      nowMs: 5,
    });
    expect(keys).toEqual(['p:{3:api:k}']);
    expect(argument).toBe('consume 1 5 fixed-window 2 1000 23=fixed-window:per second');
  });
});
