import fc from 'fast-check';
import type { LimitOptions } from '../limit';
import { delay } from './delay';
import { gcra } from './gcra';
import { checkIntervalBound, checkRefusalsChargeNothing, itKeepsTheStepContract, clockedLimiter, costArb, gapsArb, limitOf, replay, rounded, schedule, stepRows } from '../test-support/algorithms';

const T0 = 1_700_000_000_000;

/** Ten (or more) hits at the same instant: the wait each one sees (the queue ahead of it, from a peek), then its decision. */
function hammer(options: LimitOptions, hits: number) {
  const limiter = clockedLimiter(options);
  return Array.from({ length: hits }, () => {
    const waitMs = limiter.peek(T0).resetMs;
    const d = limiter.consume(T0);
    return rounded({ waitMs, allowed: d.allowed, delayMs: d.delayMs, retryAfterMs: d.retryAfterMs });
  });
}

describe('delay', () => {
  describe('"wait-until": one request per 1,000 ms, maxDelayMs 5,000, refusedPenaltyCapMs 10,000', () => {
    const options: LimitOptions = { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000, refusedPenaltyCapMs: 10_000 };

    it('admits ten back-to-back hits waiting 0–5 s (delayMs = the wait), refuses those waiting 6–9 s, and each refusal still pushes the wait by 1 s', () => {
      const admittedRow = (s: number) => ({ waitMs: s * 1_000, allowed: true, delayMs: s * 1_000, retryAfterMs: 0 });
      // A refused hit pushes the wait-until by T, so it may retry once the wait is back down to 5 s: 2 s later for the 7th.
      const refusedRow = (s: number) => ({ waitMs: s * 1_000, allowed: false, delayMs: 0, retryAfterMs: (s - 4) * 1_000 });
      expect(hammer(options, 10)).toEqual([0, 1, 2, 3, 4, 5].map(admittedRow).concat([6, 7, 8, 9].map(refusedRow)));
    });

    it('caps the push at 10 s from now, and admits the hit that retries after retryAfterMs with the longest delay', () => {
      const limiter = clockedLimiter(options);
      for (let i = 0; i < 12; i++) limiter.consume(T0);
      expect(limiter.peek(T0).resetMs).toBe(10_000);
      const refused = limiter.consume(T0);
      expect(refused).toMatchObject({ allowed: false, retryAfterMs: 5_000 });
      expect(limiter.peek(T0 + 4_999)).toMatchObject({ allowed: false }); // a peek: a refused consume would push the wait again
      expect(limiter.consume(T0 + 5_000)).toMatchObject({ allowed: true, delayMs: 5_000 });
    });
  });

  describe('a refused consume reports the wait-until it stores (penalty included)', () => {
    const options: LimitOptions = { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000, refusedPenaltyCapMs: 10_000 };

    it('timeline: the 7th hit waits 6 s, is refused, stores 7 s and reports resetMs 7,000, as the peek after it does', () => {
      const limiter = clockedLimiter(options);
      for (let i = 0; i < 6; i++) limiter.consume(T0);
      const rows = [
        ['peek before', limiter.peek(T0)],
        ['refused consume', limiter.consume(T0)],
        ['peek after', limiter.peek(T0)],
      ] as const;
      expect(rows.map(([what, d]) => [what, d.allowed, d.resetMs, d.retryAfterMs])).toEqual([
        // Before: the queue ahead is 6 s (a peek writes nothing, so no penalty yet).
        ['peek before', false, 6_000, 2_000],
        // The refusal pushes the wait-until to 7 s and says so (it used to report 6,000).
        ['refused consume', false, 7_000, 2_000],
        ['peek after', false, 7_000, 3_000],
      ]);
    });

    it('with blockDurationMs as well: the block and the penalty both show', () => {
      const limiter = clockedLimiter({ ...options, blockDurationMs: 20_000 });
      for (let i = 0; i < 6; i++) limiter.consume(T0);
      expect(limiter.consume(T0)).toMatchObject({ allowed: false, resetMs: 20_000, retryAfterMs: 20_000 });
      expect(limiter.peek(T0 + 19_999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      // At 20 s the penalised wait-until (7 s) is long past: admitted without delay.
      expect(limiter.consume(T0 + 20_000)).toMatchObject({ allowed: true, delayMs: 0 });
    });
  });

  describe('without refusedPenaltyCapMs', () => {
    const options: LimitOptions = { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000 };

    it('leaves the wait at 6 s however many hits are refused, and admits one 1 s later with a 5 s delay', () => {
      const refusedRow = { waitMs: 6_000, allowed: false, delayMs: 0, retryAfterMs: 1_000 };
      expect(hammer(options, 10).slice(6)).toEqual([refusedRow, refusedRow, refusedRow, refusedRow]);
      const limiter = clockedLimiter(options);
      for (let i = 0; i < 10; i++) limiter.consume(T0);
      expect(limiter.consume(T0 + 1_000)).toMatchObject({ allowed: true, delayMs: 5_000 });
    });
  });

  describe('with 4 per 1,000 ms (T = 250 ms), a burst of 2 and maxDelayMs 500', () => {
    const limit = limitOf({ algorithm: 'delay', limit: 4, windowMs: 1_000, burst: 2, maxDelayMs: 500 });

    it('passes the burst at once, delays the next ones by T each up to 500 ms, then refuses', () => {
      const rows = [
        { t: 0, cost: 1, allowed: true, delayMs: 0, state: [250] },
        { t: 0, cost: 1, allowed: true, delayMs: 0, state: [500] },
        { t: 0, cost: 1, allowed: true, delayMs: 250, state: [750] },
        { t: 0, cost: 1, allowed: true, delayMs: 500, state: [1_000] },
        // Would wait 750 ms: refused; once the wait is 500 ms again, 250 ms later, it passes.
        { t: 0, cost: 1, allowed: false, delayMs: 0, retryAfterMs: 250, state: [1_000] },
        { t: 250, cost: 1, allowed: true, delayMs: 500, state: [1_250] },
        // A cost above the burst can pass, late: its delay is cost × T − τ = 250 ms on an idle queue.
        { t: 2_000, cost: 3, allowed: true, delayMs: 250, state: [2_750] },
        // 5 × T − τ = 750 ms > maxDelayMs even on an idle queue: never.
        { t: 5_000, cost: 5, allowed: false, retryAfterMs: Infinity, state: [2_750] },
      ];
      expect(stepRows(delay, limit, rows)).toEqual(rounded(rows));
    });

    it('refund moves the wait-until back by cost × T, and forgets it once it is not after now', () => {
      expect(delay.refund([1_000], limit, 1, 0)).toEqual([750]);
      expect(delay.refund([1_000], limit, 4, 0)).toBeUndefined();
      expect(delay.ttlMs([1_000], limit, 250)).toBe(750);
    });
  });

  describe('properties (fast-check)', () => {
    const params = fc.record({
      limit: fc.integer({ min: 1, max: 10 }),
      windowMs: fc.integer({ min: 1, max: 5_000 }),
      burst: fc.integer({ min: 1, max: 5 }),
      maxDelayShare: fc.double({ min: 0, max: 2, noNaN: true }),
      penaltyShare: fc.option(fc.double({ min: 0, max: 3, noNaN: true }), { nil: undefined }),
      start: fc.integer({ min: 0, max: 1e6 }),
    });
    type Params = typeof params extends fc.Arbitrary<infer P> ? P : never;
    const cases = params.chain((p) => fc.tuple(fc.constant(p), gapsArb(2 * p.windowMs, costArb(4))));
    const maxDelayOf = (p: Params) => Math.round(p.maxDelayShare * p.windowMs);
    const limitFor = (p: Params) =>
      limitOf({
        algorithm: 'delay',
        limit: p.limit,
        windowMs: p.windowMs,
        burst: p.burst,
        maxDelayMs: maxDelayOf(p),
        refusedPenaltyCapMs: p.penaltyShare === undefined ? undefined : Math.round(p.penaltyShare * p.windowMs),
      });

    it('serves in arrival order, never delays beyond maxDelayMs, and serves at most max(burst, first cost) + d × limit / windowMs in any d of served time', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const served = replay(delay, limitFor(p), schedule(p.start, gaps))
            .filter((e) => e.step.allowed)
            .map((e) => {
              expect(e.step.delayMs).toBeGreaterThanOrEqual(0);
              expect(e.step.delayMs).toBeLessThanOrEqual(maxDelayOf(p) + 1e-6);
              return [e.t + e.step.delayMs, e.cost] as [number, number];
            });
          served.forEach(([s], i) => i > 0 && expect(s).toBeGreaterThanOrEqual(served[i - 1]![0] - 1e-6));
          checkIntervalBound(served, (d, first) => Math.max(p.burst, first) + (d * p.limit) / p.windowMs);
        }),
      );
    });

    it('without a penalty, admits exactly what GCRA with a burst of burst + maxDelayMs / T admits', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const q = { ...p, penaltyShare: undefined };
          const hits = schedule(p.start, gaps);
          const roomier = limitOf({ algorithm: 'gcra', limit: p.limit, windowMs: p.windowMs, burst: p.burst + (maxDelayOf(q) * p.limit) / p.windowMs });
          const meter = replay(gcra, roomier, hits);
          replay(delay, limitFor(q), hits).forEach((e, i) => {
            expect({ t: e.t, allowed: e.step.allowed }).toEqual({ t: e.t, allowed: meter[i]!.step.allowed });
          });
        }),
      );
    });

    it('a refusal changes nothing without a penalty; with one, it moves the wait-until forward only, and never past now + refusedPenaltyCapMs', () => {
      fc.assert(
        fc.property(cases, ([p, gaps]) => {
          const limit = limitFor(p);
          const events = replay(delay, limit, schedule(p.start, gaps));
          if (limit.refusedPenaltyCapMs === undefined) return checkRefusalsChargeNothing(events);
          for (const e of events.filter((e) => !e.step.allowed)) {
            const before = Math.max(e.before?.[0] ?? e.t, e.t);
            const after = e.after![0]!;
            expect(after).toBeGreaterThanOrEqual(before);
            expect(after).toBeLessThanOrEqual(Math.max(before, e.t + limit.refusedPenaltyCapMs));
          }
        }),
      );
    });

    itKeepsTheStepContract({
      algorithm: delay,
      cases,
      limitFor,
      neverFits: { when: (p, cost) => ((cost - p.burst) * p.windowMs) / p.limit > maxDelayOf(p) + 1e-9, title: 'cost × T − τ > maxDelayMs (penalty included)' },
      refundTitle: 'the burst nor takes tokens away',
      maxRefund: 20,
      refusalsChargeNothing: false,
    });
  });
});
