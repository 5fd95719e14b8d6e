import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { LimitState } from './algorithms/types';
import type { Decision } from './decision';
import { type LimitOptions, resolveLimit } from './limit';
import { createLimiter, type Limiter } from './limiter';
import { evaluatePolicy, UNCHANGED } from './policy';
import { memoryStore } from './stores/memory';
import type { MaybePromise } from './stores/types';

const T0 = 1_700_000_000_000;

/** The in-memory path answers synchronously; fail loudly if it ever does not. */
function sync(result: MaybePromise<Decision>): Decision {
  expect(result).not.toBeInstanceOf(Promise);
  return result as Decision;
}

/** toEqual, with a fast path: jest's deep equality is slow inside a property's inner loop. */
function same(actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toEqual(expected);
}

/** A limiter on its own small store, on the clock `now`. */
function limiterOf(limits: LimitOptions | LimitOptions[], now: () => number): Limiter {
  return createLimiter({ limits, now, store: memoryStore({ maxKeys: 100, pruneIntervalMs: 0 }) });
}

const perSecond: LimitOptions = { algorithm: 'token-bucket', limit: 10, windowMs: 1_000, name: 'second' };
const perMinute: LimitOptions = { algorithm: 'fixed-window', limit: 100, windowMs: 60_000, name: 'minute' };

describe('evaluatePolicy', () => {
  describe('with 10 per second and 100 per minute', () => {
    let t: number;
    let limiter: Limiter;
    beforeEach(() => {
      t = T0;
      limiter = limiterOf([perSecond, perMinute], () => t);
    });

    it('admits the 10 of the first second and charges both limits', () => {
      for (let i = 0; i < 10; i++) expect(sync(limiter.consume('k')).allowed).toBe(true);
      const seen = sync(limiter.peek('k'));
      expect(seen.limits.map((l) => [l.name, l.remaining])).toEqual([
        ['second', 0],
        ['minute', 90],
      ]);
    });

    it('refuses the 11th on the per-second limit and charges neither limit', () => {
      for (let i = 0; i < 10; i++) sync(limiter.consume('k'));
      const before = sync(limiter.peek('k'));
      const refused = sync(limiter.consume('k'));
      expect(refused.allowed).toBe(false);
      expect(refused.limits.map((l) => [l.name, l.allowed, l.tokensPaid])).toEqual([
        ['second', false, 0],
        ['minute', true, 0],
      ]);
      expect(refused.policy).toBe('second');
      expect(refused.retryAfterMs).toBe(100);
      expect(sync(limiter.peek('k'))).toEqual(before);
      expect(sync(limiter.peek('k')).limits[1]!.remaining).toBe(90);
    });

    it('refuses on the per-minute limit once 100 passed, leaving the per-second tokens untouched', () => {
      // Timeline: 10 requests at the start of each of the first 10 seconds.
      for (let s = 0; s < 10; s++) {
        t = T0 + s * 1_000;
        for (let i = 0; i < 10; i++) expect(sync(limiter.consume('k')).allowed).toBe(true);
      }
      t = T0 + 10_000;
      const refused = sync(limiter.consume('k'));
      expect(refused.allowed).toBe(false);
      expect(refused.policy).toBe('minute');
      expect(refused.retryAfterMs).toBe(50_000);
      expect(refused.limits.map((l) => [l.name, l.allowed, l.tokensPaid, l.remaining])).toEqual([
        ['second', true, 0, 10],
        ['minute', false, 0, 0],
      ]);
      expect(sync(limiter.peek('k')).limits[0]!.remaining).toBe(10);
    });

    it('refuses a cost that one limit cannot pay even when the other could', () => {
      const refused = sync(limiter.consume('k', { cost: 11 }));
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBe(Infinity);
      expect(sync(limiter.peek('k')).limits.map((l) => l.remaining)).toEqual([10, 100]);
    });
  });

  describe('given frozen states', () => {
    const limits = [resolveLimit(perSecond), resolveLimit(perMinute)];
    const states: ReadonlyArray<LimitState | undefined> = Object.freeze([Object.freeze([0, T0]), Object.freeze([T0, 4])]);

    it('refuses without mutating them and writes nothing', () => {
      const outcome = evaluatePolicy(states, limits, 1, 'consume', T0);
      expect(outcome.decision.allowed).toBe(false);
      expect(outcome.writes).toEqual([UNCHANGED, UNCHANGED]);
    });

    it('peeks without writing, even when every limit admits', () => {
      const outcome = evaluatePolicy(states, limits, 1, 'peek', T0 + 1_000);
      expect(outcome.decision.allowed).toBe(true);
      expect(outcome.writes).toEqual([UNCHANGED, UNCHANGED]);
    });

    it('writes the charged state of every limit when all admit', () => {
      const outcome = evaluatePolicy(states, limits, 2, 'consume', T0 + 500);
      expect(outcome.decision.allowed).toBe(true);
      expect(outcome.writes).toEqual([
        [3, T0 + 500],
        [T0, 6],
      ]);
    });

    it('refunds every limit, never beyond full', () => {
      const outcome = evaluatePolicy(states, limits, 50, 'refund', T0);
      expect(outcome.writes).toEqual([
        [10, T0],
        [T0, 0],
      ]);
      expect(outcome.decision.limits.map((l) => l.remaining)).toEqual([10, 100]);
    });
  });

  describe('given a delay limit with a refused-request penalty', () => {
    it('is the one documented exception: a refusal moves its wait-until time, never beyond the cap', () => {
      const limits = [resolveLimit({ algorithm: 'delay', limit: 10, windowMs: 1_000, maxDelayMs: 200, refusedPenaltyCapMs: 500 })];
      // Wait-until 300 ms ahead: a request now would wait 200 ms (the maximum); the next would wait 300 ms.
      const outcome = evaluatePolicy([[T0 + 300]], limits, 1, 'consume', T0);
      expect(outcome.decision.allowed).toBe(false);
      expect(outcome.writes).toEqual([[T0 + 400]]);
      const capped = evaluatePolicy([[T0 + 450]], limits, 1, 'consume', T0);
      expect(capped.writes).toEqual([[T0 + 500]]);
    });
  });
});

// Random multi-limit policies: names keep every limit's identity distinct.
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
  fc.record({
    algorithm: fc.constant('gcra' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.integer({ min: 50, max: 3_000 }),
    burst: fc.integer({ min: 1, max: 8 }),
  }),
  fc.record({
    algorithm: fc.constant('delay' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.integer({ min: 50, max: 3_000 }),
    burst: fc.integer({ min: 1, max: 4 }),
    maxDelayMs: fc.integer({ min: 0, max: 1_500 }),
  }),
);
const policyArb = fc.array(limitArb, { minLength: 1, maxLength: 3 }).map((limits) => limits.map((l, i) => ({ ...l, name: `l${i}` })));
const scheduleArb = fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })), cost: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 40 });

describe('evaluatePolicy (property)', () => {
  it('admits exactly when every limit run alone in lock-step would, and a refusal changes no state', () => {
    fc.assert(
      fc.property(policyArb, scheduleArb, (policy, schedule) => {
        let t = T0;
        const now = () => t;
        const multi = limiterOf(policy, now);
        const singles = policy.map((limit) => limiterOf(limit, now));
        for (const { dtMs, cost } of schedule) {
          t += dtMs;
          const before = sync(multi.peek('k', { cost }));
          const alone = singles.map((single) => sync(single.peek('k', { cost })).allowed);
          const decision = sync(multi.consume('k', { cost }));
          expect(decision.allowed).toBe(alone.every(Boolean));
          expect(decision.limits.map((l) => l.allowed)).toEqual(alone);
          if (decision.allowed) {
            expect(decision.limits.map((l) => l.tokensPaid)).toEqual(policy.map(() => cost));
            for (const single of singles) expect(sync(single.consume('k', { cost })).allowed).toBe(true);
          } else {
            expect(decision.limits.map((l) => l.tokensPaid)).toEqual(policy.map(() => 0));
            same(sync(multi.peek('k', { cost })), before);
          }
          // Same admitted history, same state: each limit of the policy reads as its lone twin.
          const together = sync(multi.peek('k', { cost })).limits;
          singles.forEach((single, i) => same(together[i], sync(single.peek('k', { cost })).limits[0]));
        }
      }),
    );
  });

  it('writes nothing at all for a refusal or a peek', () => {
    fc.assert(
      fc.property(policyArb, scheduleArb, (policy, schedule) => {
        const limits = policy.map((l, i) => resolveLimit(l, `limits[${i}]`));
        let states: Array<LimitState | undefined> = limits.map(() => undefined);
        let t = T0;
        for (const { dtMs, cost } of schedule) {
          t += dtMs;
          const frozen = Object.freeze(states.map((s) => (s === undefined ? s : Object.freeze(s.slice()))));
          expect(evaluatePolicy(frozen, limits, cost, 'peek', t).writes.every((w) => w === UNCHANGED)).toBe(true);
          const outcome = evaluatePolicy(frozen, limits, cost, 'consume', t);
          if (!outcome.decision.allowed) {
            expect(outcome.writes.every((w) => w === UNCHANGED)).toBe(true);
            continue;
          }
          expect(outcome.writes.some((w) => w === UNCHANGED)).toBe(false);
          states = outcome.writes as Array<LimitState | undefined>;
        }
      }),
    );
  });
});

describe('evaluatePolicy with a delay limit that has a refusal penalty', () => {
  it('does not push the delay limit forward when only another limit refused', () => {
    const delayLimit = resolveLimit({ algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000, refusedPenaltyCapMs: 10_000 }, 'a');
    const strict = resolveLimit({ algorithm: 'fixed-window', limit: 1, windowMs: 60_000 }, 'b');
    const states = [undefined, [0, 1]] as const;
    const outcome = evaluatePolicy(states, [delayLimit, strict], 1, 'consume', 0);
    expect(outcome.decision.allowed).toBe(false);
    expect(outcome.decision.limits[0]!.allowed).toBe(true);
    expect(outcome.writes).toEqual([UNCHANGED, UNCHANGED]);
  });
});
