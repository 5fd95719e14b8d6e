import fc from 'fast-check';
import { parseList } from 'structured-headers';
import type { Decision } from '../decision';
import { ALGORITHMS, type LimitOptions } from '../limit';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import type { RateLimitStore } from '../stores/types';
import { rateLimitHeaders } from './index';
import type { HeaderList } from './options';
import { retryAfterSeconds } from './retry-after';

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

/** A limiter on a fixed clock: `hit(atMs, cost)` consumes for one key at T0 + atMs. */
function timeline(limits: LimitsOption<unknown>) {
  let now = T0;
  const limiter = createLimiter({ limits, store: memoryStore({ maxKeys: 16, pruneIntervalMs: 0 }), now: () => now });
  return (atMs = 0, cost = 1): Decision => {
    now = T0 + atMs;
    return limiter.consume('k', { cost }) as Decision;
  };
}

const draft8 = { standardHeaders: 'draft-8', legacyHeaders: false } as const;

/** `t` of each draft-8 `RateLimit` member, by policy name. */
function tByName(headers: HeaderList): Map<string, number> {
  const joined = headers
    .filter(([n]) => n === 'RateLimit')
    .map(([, v]) => v)
    .join(', ');
  return new Map(parseList(joined).map(([name, params]) => [name as string, params.get('t') as number]));
}

function retryAfterHeader(headers: HeaderList): string | undefined {
  return headers.find(([name]) => name === 'Retry-After')?.[1];
}

describe('retryAfterSeconds', () => {
  describe('given a fixed window that refused', () => {
    it('is the time left in the window, rounded up to whole seconds', () => {
      const hit = timeline({ limit: 1, windowMs: 60_000 });
      hit();
      expect(retryAfterSeconds(hit(10_500))).toBe(50);
    });

    it('is never 0, even 1 ms before the window ends', () => {
      const hit = timeline({ limit: 1, windowMs: 60_000 });
      hit();
      const refused = hit(59_999);
      expect(refused.retryAfterMs).toBe(1);
      expect(retryAfterSeconds(refused)).toBe(1);
    });
  });

  describe('given several limits', () => {
    it('waits for the slowest of the limits that refused, and t of every refusing limit is at most Retry-After', () => {
      const hit = timeline([
        { limit: 1, windowMs: 10_000 },
        { limit: 1, windowMs: 60_000 },
      ]);
      hit();
      const refused = hit();
      const headers = rateLimitHeaders(refused, draft8);
      expect(retryAfterHeader(headers)).toBe('60');
      expect(tByName(headers)).toEqual(
        new Map([
          ['1-in-10sec', 10],
          ['1-in-1min', 60],
        ]),
      );
    });

    it('ignores a limit that admitted, however late it resets (an idle hourly limit does not force an hour)', () => {
      const hit = timeline([
        { limit: 1, windowMs: 1_000 },
        { limit: 100, windowMs: 3_600_000 },
      ]);
      hit();
      const headers = rateLimitHeaders(hit(), draft8);
      expect(retryAfterHeader(headers)).toBe('1');
      expect(tByName(headers).get('100-in-1hr')).toBe(3_600);
    });
  });

  describe.each(['token-bucket', 'gcra'] as const)('given a %s refilled at 1 per minute, emptied', (algorithm) => {
    // 100 per 100 min: full in 100 min, but one request passes again after 1 min.
    const limit: LimitOptions = { algorithm, limit: 100, windowMs: 100 * 60_000, name: 'slow' };

    it('tells the client when the request will pass (60 s), not when the bucket is full again (6000 s)', () => {
      const hit = timeline(limit);
      const emptied = hit(0, 100);
      expect(tByName(rateLimitHeaders(emptied, draft8)).get('slow')).toBe(6_000);
      const headers = rateLimitHeaders(hit(), draft8);
      expect(retryAfterHeader(headers)).toBe('60');
      expect(tByName(headers).get('slow')).toBe(60);
    });

    it('admits the same request once the advertised time has passed', () => {
      const hit = timeline(limit);
      hit(0, 100);
      const wait = retryAfterSeconds(hit());
      expect(hit(wait * 1_000 - 1).allowed).toBe(false);
      expect(hit(wait * 1_000).allowed).toBe(true);
    });
  });

  describe('given a cost that can never pass', () => {
    it('is the window of the limit (a finite value, not Infinity) on a fresh key', () => {
      const refused = timeline({ limit: 2, windowMs: 60_000 })(0, 5);
      expect(refused.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
      expect(retryAfterSeconds(refused)).toBe(60);
      expect(rateLimitHeaders(refused, draft8)).toEqual([
        ['RateLimit', '"2-in-1min"; r=2; t=60'],
        ['RateLimit-Policy', '"2-in-1min"; q=2; w=60'],
        ['Retry-After', '60'],
      ]);
    });

    it('is the longer of the window and the time to full capacity for a bucket', () => {
      const hit = timeline({ algorithm: 'token-bucket', limit: 1, windowMs: 1_000, burst: 10 });
      hit(0, 10);
      const refused = hit(0, 11);
      expect(refused.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
      expect(retryAfterSeconds(refused)).toBe(10);
    });

    it('still waits for a slower limit that refused the same request', () => {
      const hit = timeline([
        { limit: 2, windowMs: 1_000 },
        { limit: 10, windowMs: 60_000 },
      ]);
      for (let i = 0; i < 5; i++) hit(i * 1_000, 2);
      expect(retryAfterSeconds(hit(5_000, 3))).toBe(55);
    });
  });

  describe('given a refusal made by the store failure policy, not by a limit', () => {
    it("uses the decision's own wait (onStoreError: 'deny', 1 s) in Retry-After and in the reset", () => {
      const broken: RateLimitStore = {
        name: 'broken',
        shared: false,
        clock: 'caller',
        evaluate() {
          throw new Error('down');
        },
        resetKey() {},
      };
      const limiter = createLimiter({ limits: { limit: 5, windowMs: 60_000 }, store: broken, onStoreError: 'deny', onError: () => {}, now: () => T0 });
      const refused = limiter.consume('k') as Decision;
      expect(refused.allowed).toBe(false);
      expect(retryAfterSeconds(refused)).toBe(1);
      expect(rateLimitHeaders(refused, { standardHeaders: 'draft-7', legacyHeaders: false })).toEqual([
        ['RateLimit-Policy', '5;w=60'],
        ['RateLimit', 'limit=5, remaining=5, reset=1'],
        ['Retry-After', '1'],
      ]);
    });
  });

  describe('given an admitted decision', () => {
    it('returns the minimum, 1 (it is meant for refusals)', () => {
      expect(retryAfterSeconds(timeline({ limit: 5, windowMs: 60_000 })())).toBe(1);
    });
  });

  describe('for any policy and any traffic (property)', () => {
    const limitArb: fc.Arbitrary<LimitOptions> = fc
      .record({
        algorithm: fc.constantFrom(...ALGORITHMS),
        limit: fc.integer({ min: 1, max: 20 }),
        windowMs: fc.integer({ min: 100, max: 120_000 }),
      })
      .map(({ algorithm, limit, windowMs }) => ({ algorithm, limit, windowMs }));
    const policyArb = fc.uniqueArray(limitArb, { minLength: 1, maxLength: 3, selector: (l) => `${l.algorithm}:${l.limit}:${l.windowMs}` });
    const trafficArb = fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 5_000 }), cost: fc.integer({ min: 1, max: 4 }) }), {
      minLength: 1,
      maxLength: 40,
    });

    it('sends Retry-After ≥ 1 on every refusal, never earlier than t of a refusing limit, equal to the largest such t', () => {
      fc.assert(
        fc.property(policyArb, trafficArb, (limits, traffic) => {
          const hit = timeline(limits);
          let at = 0;
          for (const { gapMs, cost } of traffic) {
            at += gapMs;
            const decision = hit(at, cost);
            const headers = rateLimitHeaders(decision, draft8);
            const retryAfter = retryAfterHeader(headers);
            if (decision.allowed) {
              expect(retryAfter).toBeUndefined();
              continue;
            }
            expect(retryAfter).toMatch(/^[1-9]\d*$/);
            const t = tByName(headers);
            const refusing = decision.limits.filter((l) => !l.allowed).map((l) => t.get(l.name)!);
            for (const value of refusing) expect(Number(retryAfter)).toBeGreaterThanOrEqual(value);
            if (refusing.length > 0) expect(Number(retryAfter)).toBe(Math.max(1, ...refusing));
          }
        }),
        { numRuns: 300 },
      );
    });

    it('admits the same request when the client waits exactly Retry-After and nothing else happens (finite cases)', () => {
      fc.assert(
        fc.property(policyArb, trafficArb, (limits, traffic) => {
          const hit = timeline(limits);
          let at = 0;
          for (const { gapMs, cost } of traffic) {
            at += gapMs;
            const decision = hit(at, cost);
            if (decision.allowed || !Number.isFinite(decision.retryAfterMs)) continue;
            at += retryAfterSeconds(decision) * 1_000;
            expect(hit(at, cost).allowed).toBe(true);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
