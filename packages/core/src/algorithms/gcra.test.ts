import fc from 'fast-check';
import { gcra } from './gcra';
import { tokenBucket } from './token-bucket';
import { admitted, checkIntervalBound, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, replay, rounded, schedule, stepRows, summary } from '../test-support/algorithms';

const T0 = 1_700_000_000_000;

describe('gcra', () => {
  describe('with 4 per 1,000 ms (T = 250 ms) and a burst of 2 (τ = 500 ms)', () => {
    const limit = limitOf({ algorithm: 'gcra', limit: 4, windowMs: 1_000, burst: 2 });

    it('admits when max(tat, now) + cost × T − now ≤ τ, stores that new TAT, and refuses without storing', () => {
      const rows = [
        { t: 0, cost: 1, allowed: true, tokensAfter: 1, resetMs: 250, state: [250] },
        { t: 0, cost: 1, allowed: true, tokensAfter: 0, resetMs: 500, state: [500] },
        // newTat 750 − 0 > 500: retry when 750 − τ = 250.
        { t: 0, cost: 1, allowed: false, retryAfterMs: 250, state: [500] },
        { t: 250, cost: 1, allowed: true, tokensAfter: 0, resetMs: 500, state: [750] },
        { t: 300, cost: 1, allowed: false, retryAfterMs: 200, state: [750] },
        // The TAT is in the past: the bucket is full again, and the TAT restarts from now.
        { t: 1_000, cost: 2, allowed: true, tokensAfter: 0, resetMs: 500, state: [1_500] },
        { t: 1_000, cost: 3, allowed: false, retryAfterMs: Infinity, state: [1_500] },
      ];
      expect(stepRows(gcra, limit, rows)).toEqual(rounded(rows));
    });
  });

  describe('with 10 per 1,000 ms and a burst of 3, through createLimiter', () => {
    it('counts the burst down, gives an exact retryAfterMs, and never satisfies a cost above the burst', () => {
      const limiter = clockedLimiter({ algorithm: 'gcra', limit: 10, windowMs: 1_000, burst: 3 });
      const rows = [
        { t: T0, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 100, delayMs: 0 },
        { t: T0, cost: 1, allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 200, delayMs: 0 },
        { t: T0, cost: 1, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 300, delayMs: 0 },
        { t: T0, cost: 1, allowed: false, remaining: 0, retryAfterMs: 100, resetMs: 300, delayMs: 0 },
        { t: T0 + 100, cost: 1, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 300, delayMs: 0 },
        { t: T0 + 150, cost: 2, allowed: false, remaining: 0, retryAfterMs: 150, resetMs: 250, delayMs: 0 },
        { t: T0 + 150, cost: 4, allowed: false, remaining: 0, retryAfterMs: Infinity, resetMs: 250, delayMs: 0 },
        { t: T0 + 300, cost: 2, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 300, delayMs: 0 },
      ];
      const seen = rows.map(({ t, cost }) => ({ t, cost, ...summary(limiter.consume(t, cost)) }));
      expect(seen).toEqual(rounded(rows));
    });

    it('moves the TAT back on refund, and a refund past a full bucket just leaves it full', () => {
      const limiter = clockedLimiter({ algorithm: 'gcra', limit: 10, windowMs: 1_000, burst: 3 });
      limiter.consume(T0, 3);
      expect(summary(limiter.refund(T0 + 100, 2))).toMatchObject({ remaining: 3, resetMs: 0 });
      limiter.consume(T0 + 100, 3);
      expect(summary(limiter.refund(T0 + 100, 1))).toMatchObject({ remaining: 1, resetMs: 200 });
      expect(summary(limiter.refund(T0 + 100, 10))).toMatchObject({ remaining: 3, resetMs: 0 });
    });
  });

  describe('refund and ttlMs', () => {
    const limit = limitOf({ algorithm: 'gcra', limit: 4, windowMs: 1_000, burst: 2 });

    it('refund subtracts cost × T from the TAT, and drops the state once that is not after now (a full bucket)', () => {
      expect(gcra.refund([750], limit, 1, 250)).toEqual([500]);
      expect(gcra.refund([750], limit, 2, 250)).toBeUndefined();
      expect(gcra.refund(undefined, limit, 1, 250)).toBeUndefined();
    });

    it('ttlMs is the time until the TAT, when the bucket is full again', () => {
      expect(gcra.ttlMs([750], limit, 250)).toBe(500);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({
      limit: fc.integer({ min: 1, max: 10 }),
      windowMs: fc.integer({ min: 1, max: 5_000 }),
      burst: fc.integer({ min: 1, max: 15 }),
      start: fc.integer({ min: 0, max: 1e6 }),
    });
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));
    const limitFor = (p: { limit: number; windowMs: number; burst: number }) => limitOf({ algorithm: 'gcra', limit: p.limit, windowMs: p.windowMs, burst: p.burst });

    it('admits at most burst + d × limit / windowMs in any interval of length d', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const hits = admitted(replay(gcra, limitFor(p), schedule(p.start, gaps)));
          checkIntervalBound(hits, (d) => p.burst + (d * p.limit) / p.windowMs);
        }),
      );
    });

    it('admits exactly what a continuous token bucket of the same burst and rate admits, with the same tokens left', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const hits = schedule(p.start, gaps);
          const bucket = replay(tokenBucket, limitOf({ algorithm: 'token-bucket', limit: p.limit, windowMs: p.windowMs, burst: p.burst }), hits);
          const cell = replay(gcra, limitFor(p), hits);
          cell.forEach((e, i) => {
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: bucket[i]!.step.allowed });
            expect(e.step.tokensAfter).toBeCloseTo(bucket[i]!.step.tokensAfter, 6);
          });
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: gcra,
      cases,
      limitFor,
      neverFits: { when: (p, cost) => cost > p.burst, title: 'cost > burst' },
      refundTitle: 'the burst nor takes tokens away',
      maxRefund: 20,
    });
  });
});
