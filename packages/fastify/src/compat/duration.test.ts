import { parseTimeWindow } from './duration.js';

describe('parseTimeWindow', () => {
  describe('a valid window', () => {
    it.each([
      [60_000, 60_000],
      [1.5, 1.5],
      ['1 minute', 60_000],
      ['10s', 10_000],
      ['1.5h', 5_400_000],
      ['2 days', 172_800_000],
      ['500', 500],
    ])('%j is %d ms', (input, ms) => {
      expect(parseTimeWindow(input, 'timeWindow')).toBe(ms);
    });
  });

  describe('an invalid window', () => {
    it.each([['soon'], [''], ['-1s'], [0], [-5], [Number.NaN], [Number.POSITIVE_INFINITY], [null], [{}]])('%j throws a RateKitOptionError naming the option', (input) => {
      expect(() => parseTimeWindow(input, 'config.rateLimit.timeWindow')).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'config.rateLimit.timeWindow' }));
    });
  });
});
