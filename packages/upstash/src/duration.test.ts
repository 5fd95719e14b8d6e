import { Ratelimit as Incumbent } from '@upstash/ratelimit';
import { type Duration, ms } from './duration.js';

describe('ms', () => {
  it.each([
    ['5ms', 5],
    ['5 ms', 5],
    ['10 s', 10_000],
    ['10s', 10_000],
    ['1 m', 60_000],
    ['2 h', 7_200_000],
    ['1 d', 86_400_000],
    ['1 w', 604_800_000],
    ['1.5 m', 90_000],
    ['0.5ms', 1],
    ['0.0015 s', 2],
  ] as const)('%s is %d ms', (text, expected) => {
    expect(ms(text as Duration)).toBe(expected);
  });

  it.each(['10', 's', '10 sec', '10  s', '-1 s', '1e3 ms', ' 1 s', '1 s ', '1.s', '.5 s'])('rejects %j as the incumbent does', (text) => {
    expect(() => ms(text as Duration)).toThrow(`Unable to parse window size: ${text}`);
  });

  it.each(['0 s', '0.4ms', '0 ms'])('rejects %j, which rounds to 0 ms', (text) => {
    expect(() => ms(text as Duration)).toThrow(`Window size must be at least 1 ms, got: ${text}`);
  });

  it('accepts and rejects the same strings as @upstash/ratelimit 2.2.0', () => {
    const texts = ['5ms', '10 s', '1.5 m', '0.4ms', '0 s', '10', '10 sec', '1 w', '2.25 h', '3d', 'x'];
    for (const text of texts) {
      let ours: unknown;
      let theirs: unknown;
      try {
        ours = ms(text as Duration);
      } catch (error) {
        ours = (error as Error).message;
      }
      try {
        // The incumbent parses the window when the algorithm is built.
        Incumbent.fixedWindow(1, text as Duration);
        theirs = 'parsed';
      } catch (error) {
        theirs = (error as Error).message;
      }
      expect(typeof ours === 'number' ? 'parsed' : ours).toBe(theirs);
    }
  });
});
