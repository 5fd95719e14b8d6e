import fc from 'fast-check';
import { slidingLog } from './sliding-log';
import { admitted, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, maxInWindow, replay, rounded, schedule, stepRows, summary } from '../test-support/algorithms';

const T0 = 1_700_000_000_000;

describe('slidingLog', () => {
  describe('with 3 per 1,000 ms, through createLimiter', () => {
    it('admits while the last 1,000 ms hold fewer than 3, and retries exactly when the oldest unit leaves', () => {
      const limiter = clockedLimiter({ algorithm: 'sliding-log', limit: 3, windowMs: 1_000 });
      const rows = [
        { t: T0, cost: 1, allowed: true, remaining: 2, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 100, cost: 1, allowed: true, remaining: 1, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 100, cost: 1, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 300, cost: 1, allowed: false, remaining: 0, retryAfterMs: 700, resetMs: 800, delayMs: 0 },
        { t: T0 + 1_000, cost: 1, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 1_099, cost: 2, allowed: false, remaining: 0, retryAfterMs: 1, resetMs: 901, delayMs: 0 },
        { t: T0 + 1_100, cost: 2, allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 1_000, delayMs: 0 },
        { t: T0 + 1_100, cost: 4, allowed: false, remaining: 0, retryAfterMs: Infinity, resetMs: 1_000, delayMs: 0 },
      ];
      const seen = rows.map(({ t, cost }) => ({ t, cost, ...summary(limiter.consume(t, cost)) }));
      expect(seen).toEqual(rounded(rows));
    });
  });

  describe('the log', () => {
    const limit = limitOf({ algorithm: 'sliding-log', limit: 3, windowMs: 1_000 });

    it('keeps only the entries of the last windowMs, merges entries of the same ms, and is unchanged by a refusal', () => {
      const rows = [
        { t: 0, cost: 1, allowed: true, state: [0, 1] },
        { t: 100, cost: 1, allowed: true, state: [0, 1, 100, 1] },
        { t: 100, cost: 1, allowed: true, tokensAfter: 0, state: [0, 1, 100, 2] },
        { t: 300, cost: 1, allowed: false, retryAfterMs: 700, state: [0, 1, 100, 2] },
        { t: 1_000, cost: 1, allowed: true, tokensAfter: 0, state: [100, 2, 1_000, 1] },
        { t: 2_100, cost: 3, allowed: true, tokensAfter: 0, state: [2_100, 3] },
      ];
      expect(stepRows(slidingLog, limit, rows)).toEqual(rounded(rows));
    });

    it('stays within 2 × limit numbers under a steady flood of one request per ms', () => {
      const five = limitOf({ algorithm: 'sliding-log', limit: 5, windowMs: 1_000 });
      const hits = Array.from({ length: 2_005 }, (_, t) => [t, 1] as [number, number]);
      const events = replay(slidingLog, five, hits);
      expect(Math.max(...events.map((e) => e.after?.length ?? 0))).toBe(10);
      expect(admitted(events).map(([t]) => t)).toEqual([0, 1, 2, 3, 4, 1_000, 1_001, 1_002, 1_003, 1_004, 2_000, 2_001, 2_002, 2_003, 2_004]);
    });
  });

  describe('refund', () => {
    const limit = limitOf({ algorithm: 'sliding-log', limit: 3, windowMs: 1_000 });

    it('gives back the newest units first, never more than the log holds', () => {
      expect(slidingLog.refund([0, 1, 100, 2], limit, 1, 500)).toEqual([0, 1, 100, 1]);
      expect(slidingLog.refund([0, 1, 100, 2], limit, 2, 500)).toEqual([0, 1]);
      expect(slidingLog.refund([0, 1, 100, 2], limit, 10, 500)).toEqual([]);
    });

    it('drops entries that already left the window', () => {
      expect(slidingLog.refund([0, 1, 100, 2], limit, 1, 1_050)).toEqual([100, 1]);
    });
  });

  describe('ttlMs', () => {
    it('is the time until the newest entry leaves the window', () => {
      expect(slidingLog.ttlMs([0, 1, 100, 2], limitOf({ algorithm: 'sliding-log', limit: 3, windowMs: 1_000 }), 500)).toBe(600);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({ limit: fc.integer({ min: 1, max: 10 }), windowMs: fc.integer({ min: 1, max: 5_000 }), start: fc.integer({ min: 0, max: 1e6 }) });
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));
    const limitFor = (p: { limit: number; windowMs: number }) => limitOf({ algorithm: 'sliding-log', limit: p.limit, windowMs: p.windowMs });

    it('admits at most limit in any window [a, a + windowMs)', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const hits = admitted(replay(slidingLog, limitFor(p), schedule(p.start, gaps)));
          expect(maxInWindow(hits, p.windowMs)).toBeLessThanOrEqual(p.limit + 1e-9);
        }),
      );
    });

    it('is exact: it refuses only when the units admitted in (t − windowMs, t] plus the cost exceed limit', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const events = replay(slidingLog, limitFor(p), schedule(p.start, gaps));
          const log: Array<[number, number]> = [];
          for (const e of events) {
            const used = log.filter(([t]) => t > e.t - p.windowMs).reduce((sum, [, c]) => sum + c, 0);
            const fits = used + e.cost <= p.limit;
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: fits });
            if (fits) log.push([e.t, e.cost]);
          }
        }),
      );
    });

    it('keeps at most 2 × limit numbers (limit entries) when costs are whole units', () => {
      const wholeCases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(p.windowMs, fc.integer({ min: 1, max: 3 }))));
      fc.assert(
        fc.property(wholeCases, ([p, gaps]) => {
          for (const e of replay(slidingLog, limitFor(p), schedule(p.start, gaps))) {
            expect(e.after?.length ?? 0).toBeLessThanOrEqual(2 * p.limit);
          }
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: slidingLog,
      cases,
      limitFor,
      neverFits: { when: (p, cost) => cost > p.limit, title: 'cost > limit' },
      refundTitle: 'an empty log nor takes units away',
      maxRefund: 12,
    });
  });
});
