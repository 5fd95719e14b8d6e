import fc from 'fast-check';
import { slidingWindow } from './sliding-window';
import { admitted, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, replay, rounded, schedule, stepRows, summary } from '../test-support/algorithms';

const MINUTE = 60_000;
const M0 = 28_333_333 * MINUTE; // a minute boundary: windows are aligned to multiples of windowMs since the epoch
const M1 = M0 + MINUTE;

describe('slidingWindow', () => {
  describe('the worked example: 100 per minute, 90 in the previous minute, 50 so far in this one', () => {
    function setUp() {
      const limiter = clockedLimiter({ algorithm: 'sliding-window', limit: 100, windowMs: MINUTE });
      for (let i = 0; i < 90; i++) expect(limiter.consume(M0 + 10_000).allowed).toBe(true);
      for (let i = 0; i < 50; i++) expect(limiter.consume(M1 + 30_000).allowed).toBe(true);
      return limiter;
    }

    it('estimates 90 × 20/60 + 50 = 80 for a request 40 s into the current minute, and admits it', () => {
      const limiter = setUp();
      const seen = limiter.peek(M1 + 40_000);
      expect(100 - seen.limits[0]!.tokensAfter).toBeCloseTo(80, 9);
      expect(summary(limiter.consume(M1 + 40_000))).toEqual({ allowed: true, remaining: 19, retryAfterMs: 0, resetMs: 80_000, delayMs: 0 });
    });

    it('then admits 19 more, refuses the next until the previous minute weighs 29, and admits it then (integer-ms clock)', () => {
      const limiter = setUp();
      const t = M1 + 40_000;
      for (let i = 0; i < 20; i++) expect(limiter.consume(t).allowed).toBe(true);
      // Estimate 30 + 70 = 100: full. Room for 1 once 90 × (60 000 − e) / 60 000 ≤ 29, e ≥ 40 666.67 ms.
      const refused = limiter.consume(t);
      expect(summary(refused)).toEqual(rounded({ allowed: false, remaining: 0, retryAfterMs: 2_000 / 3, resetMs: 80_000, delayMs: 0 }));
      expect(limiter.consume(t + Math.ceil(refused.retryAfterMs) - 1).allowed).toBe(false);
      expect(limiter.consume(t + Math.ceil(refused.retryAfterMs)).allowed).toBe(true);
    });
  });

  describe("Cloudflare's example: 42 in the previous minute, 18 in this one, 15 s in", () => {
    it('estimates 42 × 45/60 + 18 = 49.5, so a limit of 50 has room for 0.5 and not for 1', () => {
      const limit = limitOf({ algorithm: 'sliding-window', limit: 50, windowMs: MINUTE });
      const state = [MINUTE, 42, 18];
      expect(slidingWindow.step(state, limit, 0, MINUTE + 15_000).tokensAfter).toBeCloseTo(0.5, 9);
      expect(slidingWindow.step(state, limit, 0.5, MINUTE + 15_000).allowed).toBe(true);
      expect(slidingWindow.step(state, limit, 1, MINUTE + 15_000).allowed).toBe(false);
    });
  });

  describe('with 10 per 1,000 ms, step by step', () => {
    const limit = limitOf({ algorithm: 'sliding-window', limit: 10, windowMs: 1_000 });

    it('rolls the current count into the previous one at each aligned window and forgets both after two', () => {
      const rows = [
        { t: 100, cost: 4, allowed: true, tokensAfter: 6, resetMs: 1_900, state: [0, 0, 4] },
        { t: 900, cost: 6, allowed: true, tokensAfter: 0, resetMs: 1_100, state: [0, 0, 10] },
        // Full for this window; next window the 10 weigh 10 × (1000 − e)/1000, ≤ 9 from e = 100.
        { t: 950, cost: 1, allowed: false, retryAfterMs: 150, state: [0, 0, 10] },
        { t: 1_100, cost: 1, allowed: true, tokensAfter: 0, resetMs: 1_900, state: [1_000, 10, 1] },
        // Estimate 10 × 0.5 + 1 = 6; 5 more fit once 10 × (1000 − e)/1000 ≤ 4, e ≥ 600.
        { t: 1_500, cost: 5, allowed: false, retryAfterMs: 100, state: [1_000, 10, 1] },
        { t: 1_600, cost: 5, allowed: true, tokensAfter: 0, resetMs: 1_400, state: [1_000, 10, 6] },
        { t: 3_500, cost: 10, allowed: true, tokensAfter: 0, resetMs: 1_500, state: [3_000, 0, 10] },
      ];
      expect(stepRows(slidingWindow, limit, rows)).toEqual(rounded(rows));
    });

    it('refuses a cost above the limit with retryAfterMs Infinity', () => {
      expect(slidingWindow.step(undefined, limit, 11, 0)).toMatchObject({ allowed: false, retryAfterMs: Infinity });
    });
  });

  describe('refund', () => {
    const limit = limitOf({ algorithm: 'sliding-window', limit: 10, windowMs: 1_000 });

    it('gives back units of the current window only, never below zero', () => {
      expect(slidingWindow.refund([0, 3, 5], limit, 2, 500)).toEqual([0, 3, 3]);
      expect(slidingWindow.refund([0, 3, 5], limit, 10, 500)).toEqual([0, 3, 0]);
      expect(slidingWindow.refund([0, 3, 5], limit, 2, 1_500)).toEqual([1_000, 5, 0]);
    });
  });

  describe('ttlMs', () => {
    it('is the time until the current window has fully slid out', () => {
      expect(slidingWindow.ttlMs([1_000, 3, 5], limitOf({ algorithm: 'sliding-window', limit: 10, windowMs: 1_000 }), 1_500)).toBe(1_500);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({ limit: fc.integer({ min: 1, max: 10 }), windowMs: fc.integer({ min: 1, max: 5_000 }), start: fc.integer({ min: 0, max: 1e6 }) });
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));
    const limitFor = (p: { limit: number; windowMs: number }) => limitOf({ algorithm: 'sliding-window', limit: p.limit, windowMs: p.windowMs });
    /** Admitted cost per aligned window index. */
    const perWindow = (hits: ReadonlyArray<readonly [number, number]>, W: number) => {
      const sums = new Map<number, number>();
      for (const [t, c] of hits) sums.set(Math.floor(t / W), (sums.get(Math.floor(t / W)) ?? 0) + c);
      return sums;
    };

    it('admits at most limit in each aligned window', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const hits = admitted(replay(slidingWindow, limitFor(p), schedule(p.start, gaps)));
          for (const sum of perWindow(hits, p.windowMs).values()) expect(sum).toBeLessThanOrEqual(p.limit + 1e-9);
        }),
      );
    });

    it('admits at most limit + previous × e / windowMs (< 2 × limit) in any sliding window (s − windowMs, s], e = s − its aligned start', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const W = p.windowMs;
          const hits = admitted(replay(slidingWindow, limitFor(p), schedule(p.start, gaps)));
          const sums = perWindow(hits, W);
          for (const [s] of hits) {
            const inWindow = hits.filter(([t]) => t > s - W && t <= s).reduce((sum, [, c]) => sum + c, 0);
            const previous = sums.get(Math.floor(s / W) - 1) ?? 0;
            const e = s - Math.floor(s / W) * W;
            expect(inWindow).toBeLessThanOrEqual(p.limit + (previous * e) / W + 1e-9);
            expect(inWindow).toBeLessThan(2 * p.limit);
          }
        }),
      );
    });

    it('admits exactly when previous × (windowMs − e) / windowMs + current + cost ≤ limit, counted from the admitted requests', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const W = p.windowMs;
          const events = replay(slidingWindow, limitFor(p), schedule(p.start, gaps));
          const log: Array<[number, number]> = [];
          for (const e of events) {
            const k = Math.floor(e.t / W);
            const sums = perWindow(log, W);
            const estimate = ((sums.get(k - 1) ?? 0) * (W - (e.t - k * W))) / W + (sums.get(k) ?? 0);
            const fits = estimate + e.cost <= p.limit + 1e-9;
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: fits });
            if (fits) log.push([e.t, e.cost]);
          }
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: slidingWindow,
      cases,
      limitFor,
      neverFits: { when: (p, cost) => cost > p.limit, title: 'cost > limit' },
      refundTitle: 'the full limit nor takes units away',
      maxRefund: 12,
    });
  });
});
