import fc from 'fast-check';
import type { Step } from './algorithms/types';
import { buildDecision, type Decision, type LimitDecision } from './decision';
import { type LimitOptions, resolveLimit } from './limit';
import { createLimiter, type Limiter } from './limiter';
import { memoryStore } from './stores/memory';
import type { MaybePromise } from './stores/types';

const T0 = 1_700_000_000_000;

function sync(result: MaybePromise<Decision>): Decision {
  expect(result).not.toBeInstanceOf(Promise);
  return result as Decision;
}

function limiterOf(limits: LimitOptions | LimitOptions[], now: () => number): Limiter {
  return createLimiter({ limits, now, store: memoryStore({ maxKeys: 100, pruneIntervalMs: 0 }) });
}

/** The per-limit token fields only, to compare against a timeline row. */
function tokens(l: LimitDecision) {
  const { tokensBefore, tokensRefilled, tokensPaid, tokensAfter, remaining, resetMs, retryAfterMs, nextRefillMs } = l;
  return { tokensBefore, tokensRefilled, tokensPaid, tokensAfter, remaining, resetMs, retryAfterMs, nextRefillMs };
}

describe('Decision', () => {
  describe('per-limit tokens of a token bucket of 10 per second', () => {
    it('account for every token over a timeline', () => {
      let t = T0;
      const limiter = limiterOf({ algorithm: 'token-bucket', limit: 10, windowMs: 1_000 }, () => t);
      // at (ms)  cost   before refilled paid  after  remaining reset retry nextRefill
      const timeline: Array<[number, number, boolean, number, number, number, number, number, number, number, number]> = [
        [0, 3, true, 10, 0, 3, 7, 7, 300, 0, 100],
        [50, 1, true, 7, 0.5, 1, 6.5, 6, 350, 0, 50],
        [50, 7, false, 6.5, 0, 0, 6.5, 6, 350, 50, 50],
        [100, 7, true, 6.5, 0.5, 7, 0, 0, 1_000, 0, 100],
        [1_100, 0, true, 0, 10, 0, 10, 10, 0, 0, 0],
      ];
      for (const [at, cost, allowed, tokensBefore, tokensRefilled, tokensPaid, tokensAfter, remaining, resetMs, retryAfterMs, nextRefillMs] of timeline) {
        t = T0 + at;
        const decision = sync(limiter.consume('k', { cost }));
        expect(decision.allowed).toBe(allowed);
        expect(tokens(decision.limits[0]!)).toEqual({ tokensBefore, tokensRefilled, tokensPaid, tokensAfter, remaining, resetMs, retryAfterMs, nextRefillMs });
      }
    });
  });

  describe('per-limit tokens of a fixed window of 3 per second', () => {
    it('credit a whole window back once it has passed', () => {
      let t = T0;
      const limiter = limiterOf({ limit: 3, windowMs: 1_000 }, () => t);
      expect(tokens(sync(limiter.consume('k')).limits[0]!)).toEqual({
        tokensBefore: 3,
        tokensRefilled: 0,
        tokensPaid: 1,
        tokensAfter: 2,
        remaining: 2,
        resetMs: 1_000,
        retryAfterMs: 0,
        nextRefillMs: 1_000,
      });
      t = T0 + 1_500;
      expect(tokens(sync(limiter.consume('k', { cost: 2 })).limits[0]!)).toEqual({
        tokensBefore: 2,
        tokensRefilled: 1,
        tokensPaid: 2,
        tokensAfter: 1,
        remaining: 1,
        resetMs: 1_000,
        retryAfterMs: 0,
        nextRefillMs: 1_000,
      });
    });
  });

  describe('a refusal', () => {
    it('says when to call again: at now + retryAfterMs the same call passes, a millisecond earlier it does not', () => {
      let t = T0;
      const limiter = limiterOf({ algorithm: 'gcra', limit: 2, windowMs: 1_000 }, () => t);
      sync(limiter.consume('k', { cost: 2 }));
      const refused = sync(limiter.consume('k'));
      expect(refused).toMatchObject({ allowed: false, retryAfterMs: 500, remaining: 0, resetMs: 1_000, cost: 1, nowMs: T0 });
      t = T0 + refused.retryAfterMs - 1;
      expect(sync(limiter.consume('k')).allowed).toBe(false);
      t = T0 + refused.retryAfterMs;
      expect(sync(limiter.consume('k')).allowed).toBe(true);
    });

    it('reports Infinity when the cost exceeds the capacity', () => {
      const limiter = limiterOf({ algorithm: 'token-bucket', limit: 5, windowMs: 1_000 }, () => T0);
      expect(sync(limiter.consume('k', { cost: 6 }))).toMatchObject({ allowed: false, retryAfterMs: Infinity });
    });
  });

  describe('the binding limit', () => {
    it('is, on a refusal, the refusing limit with the longest retryAfterMs', () => {
      let t = T0;
      const limiter = limiterOf(
        [
          { limit: 2, windowMs: 1_000, name: 'short' },
          { limit: 3, windowMs: 5_000, name: 'long' },
          { limit: 100, windowMs: 60_000, name: 'roomy' },
        ],
        () => t,
      );
      sync(limiter.consume('k'));
      t = T0 + 1_000;
      sync(limiter.consume('k'));
      t = T0 + 1_200;
      const decision = sync(limiter.consume('k', { cost: 2 }));
      // short refuses (800 ms to its window's end), long refuses (3 800 ms), roomy admits.
      expect(decision.limits.map((l) => [l.name, l.allowed, l.retryAfterMs])).toEqual([
        ['short', false, 800],
        ['long', false, 3_800],
        ['roomy', true, 0],
      ]);
      expect(decision).toMatchObject({ allowed: false, policy: 'long', limit: 3, remaining: 1, resetMs: 3_800, retryAfterMs: 3_800 });
    });

    it('is, on a refusal, the refusing limit even when an admitting one is listed first', () => {
      const limiter = limiterOf(
        [
          { limit: 100, windowMs: 60_000, name: 'roomy' },
          { limit: 1, windowMs: 1_000, name: 'tight' },
        ],
        () => T0,
      );
      sync(limiter.consume('k'));
      expect(sync(limiter.consume('k'))).toMatchObject({ allowed: false, policy: 'tight', limit: 1, remaining: 0, retryAfterMs: 1_000 });
    });

    it('is, on an admission, the limit with the fewest whole tokens left', () => {
      const limiter = limiterOf(
        [
          { algorithm: 'gcra', limit: 10, windowMs: 1_000, name: 'second' },
          { limit: 5, windowMs: 60_000, name: 'minute' },
        ],
        () => T0,
      );
      expect(sync(limiter.consume('k'))).toMatchObject({ allowed: true, policy: 'minute', limit: 5, remaining: 4, resetMs: 60_000, retryAfterMs: 0 });
    });

    it('is, between limits with as many tokens left, the one that takes longer to reset', () => {
      const limiter = limiterOf(
        [
          { limit: 5, windowMs: 1_000, name: 'second' },
          { limit: 5, windowMs: 60_000, name: 'minute' },
          { limit: 5, windowMs: 10_000, name: 'ten' },
        ],
        () => T0,
      );
      expect(sync(limiter.consume('k'))).toMatchObject({ policy: 'minute', remaining: 4, resetMs: 60_000 });
    });
  });

  describe('buildDecision', () => {
    const limits = [resolveLimit({ limit: 5, windowMs: 1_000, name: 'a' }), resolveLimit({ limit: 5, windowMs: 1_000, name: 'b' })];
    const step = (over: Partial<Step>): Step => ({
      allowed: true,
      next: [],
      nextIfRefused: undefined,
      capacity: 5,
      tokensBefore: 5,
      tokensRefilled: 0,
      tokensAfter: 4,
      resetMs: 1_000,
      retryAfterMs: 0,
      nextRefillMs: 1_000,
      delayMs: 0,
      ...over,
    });

    it('reports the uncharged steps and pays nothing when the policy refused', () => {
      const decision = buildDecision({
        limits,
        charged: [step({}), step({ allowed: false, tokensAfter: -1, retryAfterMs: 300 })],
        uncharged: [step({ tokensAfter: 5, resetMs: 0, nextRefillMs: 0 }), step({ tokensBefore: 0, tokensAfter: 0, resetMs: 300 })],
        allowed: false,
        cost: 1,
        nowMs: T0,
      });
      expect(decision.limits.map((l) => [l.allowed, l.tokensPaid, l.tokensAfter, l.retryAfterMs])).toEqual([
        [true, 0, 5, 0],
        [false, 0, 0, 300],
      ]);
      expect(decision).toMatchObject({ allowed: false, policy: 'b', retryAfterMs: 300, resetMs: 300, delayMs: 0 });
    });

    it('holds an admitted request for the longest delay any limit asks for', () => {
      const decision = buildDecision({
        limits,
        charged: [step({ delayMs: 40 }), step({ delayMs: 90 })],
        uncharged: undefined,
        allowed: true,
        cost: 1,
        nowMs: T0,
      });
      expect(decision.delayMs).toBe(90);
      expect(decision.limits.map((l) => l.tokensPaid)).toEqual([1, 1]);
    });
  });
});

// Property: on random policies and schedules the fields are consistent and enough to schedule the next call.
const limitArb: fc.Arbitrary<LimitOptions> = fc.oneof(
  fc.record({
    algorithm: fc.constantFrom('fixed-window' as const, 'sliding-window' as const, 'sliding-log' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.integer({ min: 50, max: 3_000 }),
  }),
  fc.record({
    algorithm: fc.constant('token-bucket' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.integer({ min: 50, max: 3_000 }),
    burst: fc.integer({ min: 1, max: 8 }),
    refill: fc.constantFrom('continuous' as const, 'interval' as const),
  }),
  fc.record({ algorithm: fc.constant('gcra' as const), limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 50, max: 3_000 }), burst: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    algorithm: fc.constant('delay' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.integer({ min: 50, max: 3_000 }),
    burst: fc.integer({ min: 1, max: 4 }),
    maxDelayMs: fc.integer({ min: 0, max: 1_500 }),
  }),
);
const policyArb = fc.array(limitArb, { minLength: 1, maxLength: 3 }).map((limits) => limits.map((l, i) => ({ ...l, name: `l${i}` })));
const scheduleArb = fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })), cost: fc.integer({ min: 0, max: 4 }), peek: fc.boolean() }), {
  minLength: 1,
  maxLength: 40,
});
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));

describe('Decision (property)', () => {
  it('keeps before + refilled − paid = after, and at now + retryAfterMs the refused call passes', () => {
    fc.assert(
      fc.property(policyArb, scheduleArb, (policy, schedule) => {
        let t = T0;
        const limiter = limiterOf(policy, () => t);
        for (const { dtMs, cost, peek } of schedule) {
          t += dtMs;
          const decision = sync(peek ? limiter.peek('k', { cost }) : limiter.consume('k', { cost }));
          expect(decision.nowMs).toBe(t);
          expect(decision.cost).toBe(cost);
          const charged = decision.allowed && !peek;
          for (const l of decision.limits) {
            expect(l.tokensPaid).toBe(charged ? cost : 0);
            expect(close(l.tokensBefore + l.tokensRefilled - l.tokensPaid, l.tokensAfter)).toBe(true);
            expect(l.remaining).toBe(Math.max(0, Math.floor(l.tokensAfter + 1e-9)));
            expect(l.resetMs).toBeGreaterThanOrEqual(0);
            expect(l.nextRefillMs).toBeGreaterThanOrEqual(0);
            expect(l.nextRefillMs).toBeLessThanOrEqual(l.resetMs + 1e-6);
          }
          if (decision.allowed) {
            expect(decision.retryAfterMs).toBe(0);
            continue;
          }
          expect(decision.retryAfterMs).toBeGreaterThan(0);
          if (decision.retryAfterMs === Infinity) {
            expect(decision.limits.some((l) => cost > l.limit)).toBe(true);
            continue;
          }
          // Look ahead without charging: at the first whole millisecond from now + retryAfterMs
          // (clocks tick in whole ms; a fractional instant near 1.7e12 rounds to a 2^-12 ms grid), the same cost is admitted.
          const at = t;
          t = at + Math.ceil(decision.retryAfterMs);
          const later = sync(limiter.peek('k', { cost }));
          t = at;
          expect(later.allowed).toBe(true);
        }
      }),
    );
  });

  it('tells when each limit is full again (resetMs) and when it next gains tokens (nextRefillMs)', () => {
    fc.assert(
      fc.property(policyArb, scheduleArb, (policy, schedule) => {
        let t = T0;
        const limiter = limiterOf(policy, () => t);
        for (const { dtMs, cost } of schedule) {
          t += dtMs;
          const decision = sync(limiter.consume('k', { cost }));
          const at = t;
          decision.limits.forEach((l, i) => {
            t = at + Math.ceil(l.resetMs);
            const reset = sync(limiter.peek('k', { cost: 0 })).limits[i]!;
            expect(reset.tokensAfter).toBeGreaterThanOrEqual(l.limit - 1e-6);
            if (l.nextRefillMs === 0) {
              expect(l.tokensAfter).toBeGreaterThanOrEqual(l.limit - 1e-6);
            } else if (l.algorithm !== 'sliding-window') {
              // sliding-window is left out: see the known deviation below.
              t = at + Math.ceil(l.nextRefillMs);
              expect(sync(limiter.peek('k', { cost: 0 })).limits[i]!.tokensAfter).toBeGreaterThan(l.tokensAfter);
            }
          });
          t = at;
        }
      }),
    );
  });
});

describe('Decision of a sliding-window limit', () => {
  // Known deviation, reported to the lead (algorithms/sliding-window.ts is not in this file's scope):
  // after a window with traffic, nextRefillMs points at the window boundary, where the estimate is
  // unchanged (the current count becomes the previous one at full weight), so no token is credited yet.
  it.failing('credits a token by now + nextRefillMs', () => {
    let t = T0; // a multiple of windowMs: the aligned window starts now
    const limiter = limiterOf({ algorithm: 'sliding-window', limit: 1, windowMs: 50 }, () => t);
    const charged = sync(limiter.consume('k')).limits[0]!;
    expect(charged).toMatchObject({ tokensAfter: 0, nextRefillMs: 50 });
    t = T0 + charged.nextRefillMs;
    expect(sync(limiter.peek('k', { cost: 0 })).limits[0]!.tokensAfter).toBeGreaterThan(0);
  });
});
