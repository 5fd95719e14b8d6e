import { expireKeyOf, expireValue, MAX_RELATIVE_EXPTIME_SECONDS, memcachedExptime, msBeforeNextOf, msOfNewWindow, ttlSeconds } from './memcache-layout.js';

describe("rlf's Memcached layout", () => {
  it('names the expiry key <key>_expire', () => {
    expect(expireKeyOf('rlflx:ip')).toBe('rlflx:ip_expire');
  });

  it.each([
    [60_000, 60],
    [1_999, 1],
    [999, 0],
    [0, 0],
    [-5, 0],
  ])('a duration of %p ms is a TTL of %p s (floor; under a second never expires)', (ms, seconds) => {
    expect(ttlSeconds(ms)).toBe(seconds);
  });

  it('stores the window end in epoch ms, or -1 for never; a new window answers its TTL in ms, or -1', () => {
    expect(expireValue(1_000_000, 60)).toBe(1_060_000);
    expect(expireValue(1_000_000, 0)).toBe(-1);
    expect(msOfNewWindow(60)).toBe(60_000);
    expect(msOfNewWindow(0)).toBe(-1);
  });

  it.each([
    [1_060_000, 1_000_000, 60_000],
    [1_000_000, 1_060_000, 0],
    [-1, 1_000_000, -1],
    [false, 1_000_000, 0],
    [undefined, 1_000_000, 0],
    ['1060000', 1_000_000, 60_000],
  ])('msBeforeNext of a stored _expire %p at %p is %p', (stored, nowMs, expected) => {
    expect(msBeforeNextOf(stored, nowMs)).toBe(expected);
  });

  it('sends TTLs up to 30 days as they are, and longer ones as the Unix time they end at', () => {
    expect(memcachedExptime(60, 1_800_000_000_500)).toBe(60);
    expect(memcachedExptime(MAX_RELATIVE_EXPTIME_SECONDS, 1_800_000_000_500)).toBe(2_592_000);
    expect(memcachedExptime(MAX_RELATIVE_EXPTIME_SECONDS + 1, 1_800_000_000_500)).toBe(1_800_000_000 + 2_592_001);
  });
});
