import fc from 'fast-check';
import { tokenBucket } from './token-bucket';
import { admitted, checkIntervalBound, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, replay, rounded, schedule, stepRows, summary } from '../test-support/algorithms';

const T0 = 1_700_000_000_000;
const THIRD = 1_000 / 3; // 3 per 1,000 ms: one token every 333.33… ms

describe('tokenBucket', () => {
  describe('refilled 3 per 1,000 ms with a burst of 5, through createLimiter', () => {
    it("leaves 4 tokens after a new key's first request and 3 after its second", () => {
      const limiter = clockedLimiter({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5 });
      const rows = [
        { t: T0, cost: 1, allowed: true, remaining: 4, retryAfterMs: 0, resetMs: THIRD, delayMs: 0 },
        { t: T0, cost: 1, allowed: true, remaining: 3, retryAfterMs: 0, resetMs: 2 * THIRD, delayMs: 0 },
        { t: T0, cost: 3, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 5 * THIRD, delayMs: 0 },
        { t: T0, cost: 1, allowed: false, remaining: 0, retryAfterMs: THIRD, resetMs: 5 * THIRD, delayMs: 0 },
        { t: T0 + 1_000, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 3 * THIRD, delayMs: 0 },
      ];
      const seen = rows.map(({ t, cost }) => ({ t, cost, ...summary(limiter.consume(t, cost)) }));
      expect(seen).toEqual(rounded(rows));
    });
  });

  describe('with cost 3 and a burst of 10 (refill 3 per 1,000 ms)', () => {
    it('leaves 7, 4, then 1 token, then refuses, and the refusal changes nothing', () => {
      const limiter = clockedLimiter({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 10 });
      expect([1, 2, 3].map(() => summary(limiter.consume(T0, 3)).remaining)).toEqual([7, 4, 1]);
      const before = limiter.peek(T0, 3);
      const refused = limiter.consume(T0, 3);
      expect(summary(refused)).toEqual(rounded({ allowed: false, remaining: 1, retryAfterMs: 2 * THIRD, resetMs: 9 * THIRD, delayMs: 0 }));
      expect(limiter.peek(T0, 3)).toEqual(before);
      expect(summary(limiter.consume(T0 + Math.ceil(refused.retryAfterMs), 3))).toMatchObject({ allowed: true, remaining: 0 });
    });
  });

  describe('continuous refill (the default)', () => {
    it('credits tokens in proportion to the time elapsed, capped at the burst', () => {
      const limit = limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5 });
      const rows = [
        { t: 0, cost: 5, allowed: true, tokensAfter: 0, state: [0, 0] },
        { t: 500, cost: 1, allowed: true, tokensAfter: 0.5, state: [0.5, 500] },
        { t: 600, cost: 1, allowed: false, retryAfterMs: 0.2 * THIRD, state: [0.5, 500] },
        { t: 1_000, cost: 1, allowed: true, tokensAfter: 1, state: [1, 1_000] },
        { t: 5_000, cost: 1, allowed: true, tokensAfter: 4, resetMs: THIRD, state: [4, 5_000] },
      ];
      expect(stepRows(tokenBucket, limit, rows)).toEqual(rounded(rows));
    });
  });

  describe("refill: 'interval'", () => {
    const limit = limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5, refill: 'interval' });

    it('starts an unseen key full, credits 3 only per whole elapsed 1,000 ms, and moves the timestamp only when it credits', () => {
      const rows = [
        { t: 0, cost: 5, allowed: true, tokensAfter: 0, resetMs: 2_000, state: [0, 0] },
        { t: 500, cost: 1, allowed: false, retryAfterMs: 500, state: [0, 0] },
        { t: 999, cost: 1, allowed: false, retryAfterMs: 1, state: [0, 0] },
        { t: 1_000, cost: 1, allowed: true, tokensAfter: 2, resetMs: 1_000, state: [2, 1_000] },
        { t: 1_999, cost: 3, allowed: false, retryAfterMs: 1, state: [2, 1_000] },
        // Two whole intervals: 2 + 6 capped at 5; the timestamp moves by whole intervals, keeping the phase.
        { t: 3_500, cost: 3, allowed: true, tokensAfter: 2, resetMs: 500, state: [2, 3_000] },
        { t: 3_999, cost: 5, allowed: false, retryAfterMs: 1, state: [2, 3_000] },
      ];
      expect(stepRows(tokenBucket, limit, rows)).toEqual(rounded(rows));
    });

    it('starts a key first seen mid-way full, with its phase at that first hit', () => {
      const rows = [
        { t: 250, cost: 2, allowed: true, tokensAfter: 3, state: [3, 250] },
        { t: 1_249, cost: 4, allowed: false, retryAfterMs: 1, state: [3, 250] },
        { t: 1_250, cost: 4, allowed: true, tokensAfter: 1, state: [1, 1_250] },
      ];
      expect(stepRows(tokenBucket, limit, rows)).toEqual(rounded(rows));
    });
  });

  describe('a cost above the burst', () => {
    it('is refused with retryAfterMs Infinity', () => {
      const limit = limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5 });
      expect(tokenBucket.step(undefined, limit, 6, 0)).toMatchObject({ allowed: false, retryAfterMs: Infinity, nextIfRefused: undefined });
    });
  });

  describe('refund', () => {
    it('gives tokens back after crediting the elapsed time, never beyond the burst', () => {
      const limit = limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5 });
      expect(rounded(tokenBucket.refund([1, 0], limit, 1, 500))).toEqual([3.5, 500]);
      expect(tokenBucket.refund([1, 0], limit, 10, 500)).toEqual([5, 500]);
    });

    it('in interval mode, credits only whole intervals before giving back', () => {
      const limit = limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5, refill: 'interval' });
      expect(tokenBucket.refund([1, 0], limit, 1, 500)).toEqual([2, 0]);
      expect(tokenBucket.refund([1, 0], limit, 1, 1_500)).toEqual([5, 1_000]);
    });
  });

  describe('ttlMs', () => {
    it('is the time until the bucket is full', () => {
      expect(tokenBucket.ttlMs([2, 0], limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5 }), 0)).toBeCloseTo(1_000, 9);
      expect(tokenBucket.ttlMs([2, 0], limitOf({ algorithm: 'token-bucket', limit: 3, windowMs: 1_000, burst: 5, refill: 'interval' }), 500)).toBe(500);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({
      limit: fc.integer({ min: 1, max: 10 }),
      windowMs: fc.integer({ min: 1, max: 5_000 }),
      burst: fc.integer({ min: 1, max: 15 }),
      refill: fc.constantFrom('continuous' as const, 'interval' as const),
      start: fc.integer({ min: 0, max: 1e6 }),
    });
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));
    const limitFor = (p: { limit: number; windowMs: number; burst: number; refill: 'continuous' | 'interval' }) =>
      limitOf({ algorithm: 'token-bucket', limit: p.limit, windowMs: p.windowMs, burst: p.burst, refill: p.refill });

    it('admits at most burst + d × limit / windowMs in any interval of length d (continuous), burst + ⌈d / windowMs⌉ × limit (interval)', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const hits = admitted(replay(tokenBucket, limitFor(p), schedule(p.start, gaps)));
          checkIntervalBound(hits, (d) => p.burst + (p.refill === 'continuous' ? (d * p.limit) / p.windowMs : Math.ceil(d / p.windowMs) * p.limit));
        }),
      );
    });

    it('refuses only when the bucket lacks the cost: it admits exactly what a reference bucket admits', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const events = replay(tokenBucket, limitFor(p), schedule(p.start, gaps));
          let level: number | undefined;
          let at = 0;
          for (const e of events) {
            // An unseen key is full; then `limit` per windowMs, pro rata or per whole interval.
            let now = p.burst;
            let nowAt = e.t;
            if (level !== undefined && p.refill === 'continuous') {
              now = Math.min(p.burst, level + ((e.t - at) * p.limit) / p.windowMs);
            } else if (level !== undefined) {
              const intervals = Math.floor((e.t - at) / p.windowMs);
              now = Math.min(p.burst, level + intervals * p.limit);
              nowAt = at + intervals * p.windowMs;
            }
            const fits = e.cost <= now + 1e-9;
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: fits });
            if (fits) [level, at] = [now - e.cost, nowAt];
          }
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: tokenBucket,
      cases,
      limitFor,
      neverFits: { when: (p, cost) => cost > p.burst, title: 'cost > burst' },
      refundTitle: 'the burst nor takes tokens away',
      maxRefund: 20,
    });
  });
});
