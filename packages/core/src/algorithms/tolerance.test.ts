import type { AlgorithmName } from '../limit';
import { clockedLimiter } from '../test-support/algorithms';
import { EPSILON, snapToWhole, tatSlackMs, wholeTokens } from './tolerance';

/** Unix epoch ms of today's order: a double holds only multiples of 2⁻¹² ms here. */
const NOW = 1_700_000_000_123;

describe('tolerance', () => {
  describe('wholeTokens', () => {
    it.each([
      [3, 3],
      [3 - EPSILON / 2, 3],
      [2.99, 2],
      [0.5, 0],
      [-0.5, 0],
    ])('counts %p tokens as %p whole ones (float noise below an integer is forgiven, never negative)', (tokens, whole) => {
      expect(wholeTokens(tokens)).toBe(whole);
    });
  });

  describe('snapToWhole', () => {
    it.each([
      [5.9999992, 1e-6, 6],
      [6.0000008, 1e-6, 6],
      [5.99, 1e-6, 5.99],
      [0.5, 1e-6, 0.5],
    ])('snaps %p within %p to %p', (tokens, tolerance, snapped) => {
      expect(snapToWhole(tokens, tolerance)).toBe(snapped);
    });
  });

  describe('tatSlackMs', () => {
    it('is EPSILON tokens worth of time near 0 ms (the rounding term is negligible there)', () => {
      expect(tatSlackMs(1_000, 0, 250)).toBeCloseTo(EPSILON * 250, 11);
    });

    it('covers one rounding step (2⁻¹² ms) per token of backlog plus one at Unix-epoch times, and stays far below a microsecond per token', () => {
      const T = 1_000 / 7;
      const slack = tatSlackMs(NOW + 7 * T, NOW, T);
      expect(slack).toBeGreaterThanOrEqual(8 * 2 ** -12);
      expect(slack).toBeLessThan(8 * 0.001);
    });
  });

  describe('at Unix-epoch times (Date.now() ≈ 1.7e12 ms), where each TAT addition rounds', () => {
    it('7 per 1,000 ms by GCRA admits the whole burst of 7 at one instant, counting remaining 6 … 0, then refuses', () => {
      const limiter = clockedLimiter({ algorithm: 'gcra', limit: 7, windowMs: 1_000 });
      const seen = Array.from({ length: 8 }, () => [limiter.consume(NOW).allowed, limiter.peek(NOW).remaining]);
      expect(seen).toEqual([6, 5, 4, 3, 2, 1, 0].map((r) => [true, r]).concat([[false, 0]]));
    });

    it('delay mode at 3 per 1,000 ms spaces a burst by exactly T = 333.33… ms up to maxDelayMs', () => {
      const limiter = clockedLimiter({ algorithm: 'delay', limit: 3, windowMs: 1_000, maxDelayMs: 1_000 });
      const seen = Array.from({ length: 5 }, () => limiter.consume(NOW));
      expect(seen.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
      // The TAT holds multiples of 2⁻¹² ms here, so delays are exact to a fraction of a microsecond.
      [0, 1_000 / 3, 2_000 / 3, 1_000, 0].forEach((ms, i) => expect(seen[i]!.delayMs).toBeCloseTo(ms, 3));
    });

    it.each<[AlgorithmName]>([['gcra'], ['token-bucket'], ['delay']])(
      '%s: for 1–60 per 1 s, 997 ms, 1 min or 1 h, a full burst passes with exact remaining, the next is refused, and passes at ⌈retryAfterMs⌉',
      (algorithm) => {
        const failures: unknown[] = [];
        for (const start of [NOW, 1_712_345_678_901, 4_000_000_000_007]) {
          for (const windowMs of [1_000, 997, 60_000, 3_600_000]) {
            for (let limit = 1; limit <= 60; limit++) {
              const options = algorithm === 'delay' ? { algorithm, limit, windowMs, burst: limit, maxDelayMs: 0 } : { algorithm, limit, windowMs };
              const limiter = clockedLimiter(options);
              const burst = Array.from({ length: limit }, () => limiter.consume(start));
              const remaining = burst.map((d) => (d.allowed && d.delayMs === 0 ? d.remaining : -1));
              const expected = Array.from({ length: limit }, (_, i) => limit - 1 - i);
              const refused = limiter.consume(start);
              const later = limiter.consume(start + Math.ceil(refused.retryAfterMs));
              if (remaining.join() !== expected.join() || refused.allowed || !later.allowed) {
                failures.push({ start, windowMs, limit, remaining, refused: refused.allowed, later: later.allowed });
              }
            }
          }
        }
        expect(failures).toEqual([]);
      },
    );
  });
});
