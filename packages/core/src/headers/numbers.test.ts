import { countValue, deltaSeconds, epochSeconds, MAX_SF_INTEGER, wholeMs } from './numbers';

describe('countValue', () => {
  // [count, header integer]
  it.each([
    [0, 0],
    [7, 7],
    [2.9, 2],
    [-1, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, MAX_SF_INTEGER],
    [1e16, MAX_SF_INTEGER],
  ])('writes %p as %p (whole, never negative, at most 15 digits)', (count, expected) => {
    expect(countValue(count)).toBe(expected);
  });
});

describe('wholeMs', () => {
  it.each([
    [0, 0],
    [1, 1],
    [0.2, 1],
    [1000.0000000001, 1000],
    [1000.5, 1001],
    [-5, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, MAX_SF_INTEGER],
  ])('rounds %p ms up to %p, forgiving float noise', (ms, expected) => {
    expect(wholeMs(ms)).toBe(expected);
  });
});

describe('deltaSeconds', () => {
  // [ms, seconds]
  it.each([
    [0, 0],
    [1, 1],
    [999, 1],
    [1_000, 1],
    [1_001, 2],
    [59_001, 60],
    [60_000, 60],
    [60_000.0000001, 60],
    [86_400_000, 86_400],
    [-3_000, 0],
    [Number.NaN, 0],
  ])('writes %p ms as %p s (rounded up, never negative)', (ms, expected) => {
    expect(deltaSeconds(ms)).toBe(expected);
  });

  it('never exceeds the largest Structured Fields Integer', () => {
    expect(deltaSeconds(Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(MAX_SF_INTEGER);
    expect(String(deltaSeconds(1e300))).toMatch(/^\d{1,15}$/);
  });
});

describe('epochSeconds', () => {
  const T0 = 1_795_262_400_000; // Sat, 21 Nov 2026 12:00:00 GMT

  it('gives the epoch second of the reset, rounded up (express-rate-limit: ceil(resetTime / 1000))', () => {
    expect(epochSeconds(T0, 23_000)).toBe(1_795_262_423);
    expect(epochSeconds(T0 + 1, 23_000)).toBe(1_795_262_424);
    expect(epochSeconds(T0, 22_999.5)).toBe(1_795_262_423);
  });

  it('is the current second when the reset is now, never 0 (which would mean 1970)', () => {
    expect(epochSeconds(T0, 0)).toBe(1_795_262_400);
  });
});
