import fc from 'fast-check';
import { fixedWindow } from './fixed-window';
import { admitted, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, maxInWindow, replay, rounded, schedule, stepRows, summary } from '../test-support/algorithms';

const T0 = 1_700_000_000_250; // not on a whole second: the window follows the first hit, not the clock

describe('fixedWindow', () => {
  describe('with 3 per 1,000 ms, through createLimiter', () => {
    it('admits 3 per window counted from the first hit, refuses until that window ends, and never charges a refusal', () => {
      const limiter = clockedLimiter({ algorithm: 'fixed-window', limit: 3, windowMs: 1_000 });
      const rows = [
        { t: T0, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 100, cost: 1, allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 900, delayMs: 0 },
        { t: T0 + 900, cost: 1, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 100, delayMs: 0 },
        { t: T0 + 999, cost: 1, allowed: false, remaining: 0, retryAfterMs: 1, resetMs: 1, delayMs: 0 },
        { t: T0 + 1_000, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 1_000, cost: 2, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 1_500, cost: 1, allowed: false, remaining: 0, retryAfterMs: 500, resetMs: 500, delayMs: 0 },
        { t: T0 + 1_500, cost: 4, allowed: false, remaining: 0, retryAfterMs: Infinity, resetMs: 500, delayMs: 0 },
        { t: T0 + 2_000, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
      ];
      const seen = rows.map(({ t, cost }) => ({ t, cost, ...summary(limiter.consume(t, cost)) }));
      expect(seen).toEqual(rounded(rows));
    });
  });

  describe("a key's window", () => {
    const limit = limitOf({ algorithm: 'fixed-window', limit: 3, windowMs: 1_000 });

    it('starts at its first hit and, once over, again at the next hit rather than on a multiple of windowMs', () => {
      const rows = [
        { t: 250, cost: 1, allowed: true, resetMs: 1_000, state: [250, 1] },
        { t: 1_249, cost: 2, allowed: true, resetMs: 1, tokensAfter: 0, state: [250, 3] },
        { t: 1_250, cost: 1, allowed: true, resetMs: 1_000, tokensAfter: 2, state: [1_250, 1] },
        { t: 1_700, cost: 3, allowed: false, retryAfterMs: 550, state: [1_250, 1] },
        { t: 2_800, cost: 3, allowed: true, resetMs: 1_000, tokensAfter: 0, state: [2_800, 3] },
      ];
      expect(stepRows(fixedWindow, limit, rows)).toEqual(rounded(rows));
    });

    it('is not re-anchored by a refused hit after it ended', () => {
      const rows = [
        { t: 1_500, cost: 4, allowed: false, retryAfterMs: Infinity, state: [0, 3] },
        { t: 1_600, cost: 1, allowed: true, resetMs: 1_000, state: [1_600, 1] },
      ];
      expect(stepRows(fixedWindow, limit, rows, [0, 3])).toEqual(rounded(rows));
    });

    it('lets almost 2 × limit through within 2 ms across its end (the known cost of fixed windows)', () => {
      const rows = [
        { t: 0, cost: 1, allowed: true },
        { t: 999, cost: 2, allowed: true },
        { t: 1_000, cost: 3, allowed: true, state: [1_000, 3] },
      ];
      expect(stepRows(fixedWindow, limit, rows)).toEqual(rounded(rows));
    });
  });

  describe('refund', () => {
    const limit = limitOf({ algorithm: 'fixed-window', limit: 3, windowMs: 1_000 });

    it('gives units back within the current window, never more than were used', () => {
      expect(fixedWindow.refund([0, 2], limit, 1, 500)).toEqual([0, 1]);
      expect(fixedWindow.refund([0, 2], limit, 5, 500)).toEqual([0, 0]);
      expect(fixedWindow.step([0, 0], limit, 0, 500).tokensAfter).toBe(3);
    });

    it('leaves an ended window alone (it is already full again)', () => {
      expect(fixedWindow.refund([0, 2], limit, 1, 1_000)).toEqual([0, 2]);
      expect(fixedWindow.refund(undefined, limit, 1, 1_000)).toBeUndefined();
    });
  });

  describe('ttlMs', () => {
    it('is the time left in the window', () => {
      expect(fixedWindow.ttlMs([250, 1], limitOf({ limit: 3, windowMs: 1_000 }), 1_000)).toBe(250);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({ limit: fc.integer({ min: 1, max: 10 }), windowMs: fc.integer({ min: 1, max: 5_000 }), start: fc.integer({ min: 0, max: 1e6 }) });
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));

    it('admits at most limit per window, windows anchored at the first admitted hit after the previous one ends', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const limit = limitOf({ algorithm: 'fixed-window', limit: p.limit, windowMs: p.windowMs });
          const hits = admitted(replay(fixedWindow, limit, schedule(p.start, gaps)));
          let windowStart = -Infinity;
          let used = 0;
          for (const [t, cost] of hits) {
            if (t >= windowStart + p.windowMs) [windowStart, used] = [t, 0];
            used += cost;
            expect(used).toBeLessThanOrEqual(p.limit + 1e-9);
          }
        }),
      );
    });

    it('refuses only when the window is full: it admits exactly what a per-window counter admits', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const limit = limitOf({ algorithm: 'fixed-window', limit: p.limit, windowMs: p.windowMs });
          const events = replay(fixedWindow, limit, schedule(p.start, gaps));
          let windowStart = -Infinity;
          let used = 0;
          for (const e of events) {
            const fresh = e.t >= windowStart + p.windowMs;
            const inWindow = fresh ? 0 : used;
            const fits = inWindow + e.cost <= p.limit;
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: fits });
            if (fits) [windowStart, used] = fresh ? [e.t, e.cost] : [windowStart, used + e.cost];
          }
        }),
      );
    });

    it('admits at most 2 × limit in any interval of length windowMs', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const limit = limitOf({ algorithm: 'fixed-window', limit: p.limit, windowMs: p.windowMs });
          const hits = admitted(replay(fixedWindow, limit, schedule(p.start, gaps)));
          expect(maxInWindow(hits, p.windowMs)).toBeLessThanOrEqual(2 * p.limit + 1e-9);
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: fixedWindow,
      cases,
      limitFor: (p) => limitOf({ algorithm: 'fixed-window', limit: p.limit, windowMs: p.windowMs }),
      neverFits: { when: (p, cost) => cost > p.limit, title: 'cost > limit' },
      refundTitle: 'the full window nor takes units away',
      maxRefund: 12,
    });
  });
});
