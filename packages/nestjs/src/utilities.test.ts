import { days, hours, minutes, seconds, weeks } from './utilities.js';

describe('duration helpers (ms, as @nestjs/throttler)', () => {
  it('converts to milliseconds', () => {
    expect(seconds(1)).toBe(1_000);
    expect(minutes(2)).toBe(120_000);
    expect(hours(1)).toBe(3_600_000);
    expect(days(1)).toBe(86_400_000);
    expect(weeks(1)).toBe(604_800_000);
  });
});
