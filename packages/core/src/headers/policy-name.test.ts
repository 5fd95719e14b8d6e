import { defaultPolicyName } from './policy-name';

describe('defaultPolicyName', () => {
  describe('matches express-rate-limit v8 default identifier', () => {
    // [limit, windowMs, name]
    it.each([
      [100, 15 * 60_000, '100-in-15min'],
      [10, 1_000, '10-in-1sec'],
      [7, 90_000, '7-in-1.5min'],
      [2, 60_000, '2-in-1min'],
      [5, 60_000, '5-in-1min'],
      [7, 1_500, '7-in-1.5sec'],
      [10, 500, '10-in-0.5sec'],
      [3, 59_000, '3-in-59sec'],
      [3, 59_999, '3-in-59.999sec'],
      [500, 90 * 60_000, '500-in-1.5hrs'],
      [1, 3_600_000, '1-in-1hr'],
      [5, 7_200_000, '5-in-2hrs'],
      [5, 23 * 3_600_000, '5-in-23hrs'],
      [1000, 86_400_000, '1000-in-1day'],
      [1000, 2 * 86_400_000, '1000-in-2days'],
      [9, 36 * 3_600_000, '9-in-1.5days'],
      [1.5, 1_000, '1.5-in-1sec'],
      [5, 100_000, '5-in-1.6666666666666667min'],
    ])('names %p per %p ms %p', (limit, windowMs, expected) => {
      expect(defaultPolicyName(limit, windowMs)).toBe(expected);
    });
  });

  it('switches unit at exactly 60 s, 60 min and 24 h', () => {
    expect(defaultPolicyName(1, 60_000)).toBe('1-in-1min');
    expect(defaultPolicyName(1, 3_600_000)).toBe('1-in-1hr');
    expect(defaultPolicyName(1, 86_400_000)).toBe('1-in-1day');
  });
});
