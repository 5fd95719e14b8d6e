import { decodeBucket, decodeWindow, encodeBucket, encodeWindow, MAX_NUMERIC_COUNT, MAX_NUMERIC_START, ttlSeconds } from './codec.js';

describe('window counters', () => {
  describe('encodeWindow', () => {
    it.each([
      [{ startMs: 0, count: 0 }, '0'],
      [{ startMs: 1, count: 5 }, String(2 ** 22 + 5)],
      [{ startMs: 1_700_000_000_000, count: 3 }, (1_700_000_000_000n * 4_194_304n + 3n).toString()],
      [{ startMs: MAX_NUMERIC_START - 1, count: MAX_NUMERIC_COUNT - 1 }, (BigInt(MAX_NUMERIC_START - 1) * 4_194_304n + BigInt(MAX_NUMERIC_COUNT - 1)).toString()],
    ])('writes %j as the number start × 2²² + count: %s', (window, text) => {
      expect(encodeWindow(window)).toBe(text);
      expect(decodeWindow(text, 'k')).toEqual(window);
    });

    it.each([
      [{ startMs: 1_700_000_000_000, count: 0.5 }, 'w1700000000000:0.5'],
      [{ startMs: 1_700_000_000_000.25, count: 1 }, 'w1700000000000.25:1'],
      [{ startMs: MAX_NUMERIC_START, count: 1 }, `w${MAX_NUMERIC_START}:1`],
      [{ startMs: 5, count: MAX_NUMERIC_COUNT }, `w5:${MAX_NUMERIC_COUNT}`],
      [{ startMs: -1_000, count: 2 }, 'w-1000:2'],
      [{ startMs: 0, count: 0.1 + 0.2 }, 'w0:0.30000000000000004'],
    ])('writes %j as text, which Memcached cannot increment: %s', (window, text) => {
      expect(encodeWindow(window)).toBe(text);
      expect(decodeWindow(text, 'k')).toEqual(window);
    });
  });

  describe('decodeWindow', () => {
    it('ignores the trailing spaces Memcached leaves after a decrement', () => {
      expect(decodeWindow('4194305  ', 'k')).toEqual({ startMs: 1, count: 1 });
    });

    it('reads the count in the low 22 bits, so an increment in place adds to the count alone', () => {
      const before = BigInt(encodeWindow({ startMs: 1_700_000_000_000, count: 7 }));
      expect(decodeWindow((before + 3n).toString(), 'k')).toEqual({ startMs: 1_700_000_000_000, count: 10 });
    });

    it.each(['', 'hello', 'w1:', 'wx:1', '{"a":1}', '1'.repeat(21)])('rejects %j, naming the key', (text) => {
      expect(() => decodeWindow(text, 'rk:abc.f')).toThrow(expect.objectContaining({ code: 'ERR_MEMCACHED_VALUE', message: expect.stringContaining('rk:abc.f') }));
    });
  });
});

describe('the bucket item', () => {
  it('keeps every state and its expiry exactly, fractions included', () => {
    const entries = new Map([
      ['gcra:second', { expiresAtMs: 1_700_000_000_333.3333, state: [1_700_000_000_333.3333] }],
      ['sliding-log:hour', { expiresAtMs: 1_700_003_600_000, state: [1_700_000_000_000, 1, 1_700_000_000_001, 0.25] }],
    ]);
    const text = encodeBucket(entries);
    expect(text).toBe('{"gcra:second":[1700000000333.3333,1700000000333.3333],"sliding-log:hour":[1700003600000,1700000000000,1,1700000000001,0.25]}');
    expect(decodeBucket(text, 'k')).toEqual(entries);
  });

  it.each(['', 'not json', '[1,2]', '{"a":[]}', '{"a":["x"]}', '{"a":3}'])('rejects %j', (text) => {
    expect(() => decodeBucket(text, 'k')).toThrow(expect.objectContaining({ code: 'ERR_MEMCACHED_VALUE' }));
  });
});

describe('ttlSeconds', () => {
  it.each([
    [-5, 1],
    [0, 1],
    [Number.NaN, 1],
    [1, 2],
    [1_000, 2],
    [1_001, 3],
    [3_600_000, 3_601],
    [30 * 86_400_000 - 1_000, 30 * 86_400],
  ])('keeps an item that must live %d ms for %d s (rounded up, plus the second Memcached clock ticks by)', (ms, seconds) => {
    expect(ttlSeconds(ms)).toBe(seconds);
  });

  it('sends longer TTLs as a Unix time, as Memcached reads anything above 30 days as one', () => {
    const now = Math.floor(Date.now() / 1_000);
    const ttl = ttlSeconds(31 * 86_400_000);
    expect(ttl).toBeGreaterThanOrEqual(now + 31 * 86_400 + 1);
    expect(ttl).toBeLessThanOrEqual(now + 31 * 86_400 + 3);
  });
});
