import fc from 'fast-check';
import type { Decision } from '../decision';
import { ALGORITHMS, type LimitOptions } from '../limit';
import { createLimiter } from '../limiter';
import { memoryStore } from '../stores/memory';
import type { EvaluateRequest, RateLimitStore } from '../stores/types';
import { type HeaderOptions, rateLimitHeaders, resolveHeaderOptions, STANDARD_HEADER_DRAFTS } from './index';
import { headerListOf } from './memo';

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

/** A shared store answering with Promises, so the limiter keeps refusals (cached answers come re-timed). */
function sharedMemory(): RateLimitStore {
  const inner = memoryStore({ maxKeys: 16, pruneIntervalMs: 0 });
  return { name: 'shared-memory', shared: true, clock: 'caller', evaluate: async (r: EvaluateRequest) => inner.evaluate(r), resetKey: async (k, n) => inner.resetKey(k, n) };
}

const optionsArbitrary: fc.Arbitrary<HeaderOptions> = fc
  .record({
    standardHeaders: fc.constantFrom(false, false, false, ...STANDARD_HEADER_DRAFTS),
    legacyHeaders: fc.boolean(),
    legacyReset: fc.constantFrom('epoch' as const, 'delta' as const),
    retryAfter: fc.constantFrom(undefined, true, false),
    combineLists: fc.boolean(),
  })
  .map((input) => ({ ...resolveHeaderOptions(input), partitionKey: 'k' }));

describe('headerListOf', () => {
  it('property: gives what rateLimitHeaders gives, for every decision of a flood (store and cached answers, fractional clocks)', async () => {
    let reused = 0;
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(
        optionsArbitrary,
        fc.constantFrom(...ALGORITHMS),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 50, max: 5_000 }),
        fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1_500, noNaN: true })), cost: fc.constantFrom(1, 1, 2, 9) }), { minLength: 1, maxLength: 40 }),
        async (options, algorithm, limit, windowMs, steps) => {
          let now = T0 + 0.25;
          const limits: LimitOptions = { algorithm, limit, windowMs, ...(algorithm === 'delay' ? { maxDelayMs: 0 } : {}) };
          const limiter = createLimiter({ limits, store: sharedMemory(), now: () => now });
          const headers = headerListOf(options);
          let previous: unknown;
          for (const { dtMs, cost } of steps) {
            now += dtMs;
            let decision: Decision;
            try {
              decision = await limiter.consume('k', { cost });
            } catch {
              continue; // a cost above the capacity is refused when the limiter is built per call
            }
            const list = headers(decision);
            expect(list).toEqual(rateLimitHeaders(decision, options));
            compared++;
            if (list === previous) reused++;
            previous = list;
          }
        },
      ),
      { numRuns: 300 },
    );
    // Not vacuous: lists were reused.
    expect(reused).toBeGreaterThan(50);
    expect(compared).toBeGreaterThan(1_000);
  });

  it('reuses the list while the figures are the same, and builds a new one when one changes', () => {
    const options = resolveHeaderOptions({});
    const headers = headerListOf(options);
    let now = T0;
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 60_000 }, now: () => now });
    const admitted = limiter.consume('k') as Decision;
    const first = headers(admitted);
    expect(first).toEqual(rateLimitHeaders(admitted, options));
    now += 10;
    const refused = limiter.consume('k') as Decision;
    const second = headers(refused);
    expect(second).not.toBe(first);
    expect(second).toEqual([
      ['X-RateLimit-Limit', '1'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', String(Math.ceil((T0 + 60_000) / 1_000))],
      ['Retry-After', '60'],
    ]);
    now += 500; // Retry-After still 60 s (59.49 rounded up), the reset the same second
    expect(headers(limiter.consume('k') as Decision)).toBe(second);
    now += 1_000; // Retry-After 59
    const third = headers(limiter.consume('k') as Decision);
    expect(third).not.toBe(second);
    expect(third[3]).toEqual(['Retry-After', '59']);
  });

  it('with standard fields, calls rateLimitHeaders every time, reading the partition key set on the options', () => {
    const options: HeaderOptions = { ...resolveHeaderOptions({ standardHeaders: 'draft-8', legacyHeaders: false }), partitionKey: 'a' };
    const headers = headerListOf(options);
    const decision = createLimiter({ limits: { limit: 1, windowMs: 60_000 }, now: () => T0 }).consume('k') as Decision;
    const a = headers(decision);
    options.partitionKey = 'b';
    const b = headers(decision);
    expect(b).not.toEqual(a);
    expect(b).toEqual(rateLimitHeaders(decision, options));
  });

  it('throws as rateLimitHeaders does for a legacyReset it does not know, on every call', () => {
    const options = { standardHeaders: false, legacyHeaders: true, legacyReset: 'iso' } as unknown as HeaderOptions;
    const headers = headerListOf(options);
    const decision = createLimiter({ limits: { limit: 1, windowMs: 60_000 }, now: () => T0 }).consume('k') as Decision;
    expect(() => headers(decision)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION' }));
    expect(() => headers(decision)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION' }));
  });
});
