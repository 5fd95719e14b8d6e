// Core's rate-limit headers agree with each other (issue 38 §3; the rule: header-consistency.ts beside this file), for
// every algorithm, every header style and random traffic on a fixed clock, as core writes them (`rateLimitHeaders` and
// `headerListOf`, what every adapter's ratekit mode writes). Each adapter's `header-consistency.test.ts` checks the
// same rule through the adapter.
import { ALGORITHMS, type AlgorithmName, createLimiter, type Decision, type HeaderOptions, headerListOf, type LimitOptions, memoryStore, rateLimitHeaders } from '@ratekit/core';
import fc from 'fast-check';
import { inconsistencies } from './header-consistency.js';

const T0 = 1_795_262_400_000;
const BUCKETS: readonly AlgorithmName[] = ['token-bucket', 'gcra', 'delay'];

/** A limit of any algorithm; buckets get a burst below, equal to or above their limit. */
const limitArb: fc.Arbitrary<LimitOptions> = fc
  .record({
    algorithm: fc.constantFrom(...ALGORITHMS),
    limit: fc.integer({ min: 1, max: 40 }),
    windowMs: fc.constantFrom(250, 1_000, 1_500, 60_000),
    burst: fc.integer({ min: 1, max: 80 }),
  })
  .map(({ algorithm, limit, windowMs, burst }) => (BUCKETS.includes(algorithm) ? { algorithm, limit, windowMs, burst } : { algorithm, limit, windowMs }));

/** One or two limits (a second of another window, named apart). */
const limitsArb = fc.oneof(
  limitArb.map((l) => [l]),
  fc.tuple(limitArb, limitArb).map(([a, b]) => [
    { ...a, name: 'first' },
    { ...b, name: 'second', windowMs: b.windowMs * 7 },
  ]),
);

const STYLES: Record<string, HeaderOptions> = {
  'legacy only': { standardHeaders: false, legacyHeaders: true },
  'draft-6 + legacy': { standardHeaders: 'draft-6', legacyHeaders: true },
  'draft-7 + legacy': { standardHeaders: 'draft-7', legacyHeaders: true },
  'draft-8 + legacy': { standardHeaders: 'draft-8', legacyHeaders: true },
  'draft-8 canonical, combined': { standardHeaders: 'draft-8', legacyHeaders: true, style: 'canonical', combineLists: true },
};

/** Requests: ms since the previous one and a cost. */
const trafficArb = fc.array(fc.record({ gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })), cost: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 40 });

function readerOf(list: readonly (readonly [string, string])[]) {
  return (name: string) => {
    const values = list.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
    return values.length === 0 ? undefined : values.join(', ');
  };
}

describe('rate-limit headers agree with each other', () => {
  it.each(Object.entries(STYLES))('as core writes them: %s', (_, options) => {
    fc.assert(
      fc.property(limitsArb, trafficArb, (limits, traffic) => {
        let now = T0;
        const limiter = createLimiter({ limits, store: memoryStore({ maxKeys: 4, pruneIntervalMs: 0 }), now: () => now });
        const memo = headerListOf(options);
        for (const { gapMs, cost } of traffic) {
          now += gapMs;
          const decision = limiter.consume('client', { cost }) as Decision;
          const status = decision.allowed ? 200 : 429;
          for (const list of [rateLimitHeaders(decision, options), memo(decision)]) {
            const problems = inconsistencies(readerOf(list), status);
            if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${JSON.stringify(list)}`);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('describes a bucket by its capacity over the time to refill it (10 per second, burst 20: q=20; w=2)', () => {
    const limiter = createLimiter({ limits: { algorithm: 'token-bucket', limit: 10, windowMs: 1_000, burst: 20, name: 'read' }, now: () => T0 });
    const list = rateLimitHeaders(limiter.consume('client') as Decision, { standardHeaders: 'draft-8', legacyHeaders: true });
    expect(list).toEqual([
      ['X-RateLimit-Limit', '20'],
      ['X-RateLimit-Remaining', '19'],
      ['X-RateLimit-Reset', String(Math.ceil((T0 + 100) / 1000))],
      ['RateLimit', '"read"; r=19; t=1'],
      ['RateLimit-Policy', '"read"; q=20; w=2'],
    ]);
  });

  it('describes a delay of 10 per second with burst 1 as q=10; w=1, and its legacy limit as 10', () => {
    const limiter = createLimiter({ limits: { algorithm: 'delay', limit: 10, windowMs: 1_000, name: 'slow' }, now: () => T0 });
    const list = rateLimitHeaders(limiter.consume('client') as Decision, { standardHeaders: 'draft-8', legacyHeaders: true });
    expect(list.find(([n]) => n === 'X-RateLimit-Limit')?.[1]).toBe('10');
    expect(list.find(([n]) => n === 'RateLimit-Policy')?.[1]).toBe('"slow"; q=10; w=1');
  });

  it('leaves a window, and a bucket whose burst is its limit, as they were: their own quota per their own window', () => {
    for (const limits of [
      { limit: 5, windowMs: 1_500, name: 'w' },
      { algorithm: 'gcra' as const, limit: 100, windowMs: 60_000, name: 'w' },
    ]) {
      const limiter = createLimiter({ limits, now: () => T0 });
      const list = rateLimitHeaders(limiter.consume('client') as Decision, { standardHeaders: 'draft-8', legacyHeaders: false });
      expect(list.find(([n]) => n === 'RateLimit-Policy')?.[1]).toBe(`"w"; q=${limits.limit}; w=${Math.ceil(limits.windowMs / 1000)}`);
    }
  });
});
