import fc from 'fast-check';
import { rateLimitHeaders, resolveHeaderOptions, retryAfterSeconds } from '../headers/index';
import { ALGORITHMS, type AlgorithmName, type LimitOptions, resolveLimit } from '../limit';
import { evaluatePolicy } from '../policy';
import { memoryStore } from '../stores/memory';
import { blockedUntil, hasBlock, withBlock, withoutBlock } from './block';
import { algorithms } from './index';
import { clockedLimiter } from '../test-support/algorithms';

const T0 = 1_700_000_000_000;

/** The limit of each algorithm's timeline: 2 per 1,000 ms, blocked 5,000 ms on a refusal. */
function blocking(algorithm: AlgorithmName): LimitOptions {
  return { algorithm, limit: 2, windowMs: 1_000, blockDurationMs: 5_000, ...(algorithm === 'delay' ? { burst: 2, maxDelayMs: 0 } : {}) };
}

describe('blockDurationMs', () => {
  describe.each(ALGORITHMS)('%s, 2 per 1,000 ms, blocked 5,000 ms', (algorithm) => {
    it('follows the timeline: the refusal blocks, the budget refills meanwhile but stays refused, then admits', () => {
      const limiter = clockedLimiter(blocking(algorithm));
      const row = (t: number) => {
        const d = limiter.consume(T0 + t);
        return [t, d.allowed, d.remaining, Math.round(d.retryAfterMs), Math.round(d.resetMs)];
      };
      expect([row(0), row(0), row(0), row(1_000), row(4_999), row(5_000)]).toEqual([
        [0, true, 1, 0, expect.any(Number)],
        [0, true, 0, 0, expect.any(Number)],
        // Refused: blocked until 5,000, reported as empty until then.
        [0, false, 0, 5_000, 5_000],
        // The window has rolled over (the algorithm alone would admit): still blocked, nothing charged.
        [1_000, false, 0, 4_000, 4_000],
        [4_999, false, 0, 1, 1],
        [5_000, true, 1, 0, expect.any(Number)],
      ]);
    });

    it('reports blockedMs, the time left in the block, on the blocked limit while it lasts, on every mode', () => {
      const limiter = clockedLimiter(blocking(algorithm));
      const blockedMs = (d: { limits: ReadonlyArray<{ blockedMs?: number }> }) => d.limits[0]!.blockedMs;
      expect(blockedMs(limiter.consume(T0))).toBeUndefined();
      expect(blockedMs(limiter.consume(T0))).toBeUndefined();
      expect(blockedMs(limiter.consume(T0))).toBe(5_000); // the refusal that blocks
      expect(blockedMs(limiter.consume(T0 + 1_000))).toBe(4_000);
      expect(blockedMs(limiter.peek(T0 + 2_000))).toBe(3_000);
      expect(blockedMs(limiter.refund(T0 + 4_999, 1))).toBe(1);
      expect(blockedMs(limiter.peek(T0 + 5_000))).toBeUndefined();
    });

    it('a peek reports the block and leaves it; a refund keeps it; reset lifts it', () => {
      const limiter = clockedLimiter(blocking(algorithm));
      limiter.consume(T0);
      limiter.consume(T0);
      expect(limiter.consume(T0).allowed).toBe(false);
      expect(limiter.peek(T0 + 2_000)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 3_000, resetMs: 3_000 });
      expect(limiter.refund(T0 + 2_000, 2).remaining).toBe(0);
      expect(limiter.consume(T0 + 2_000)).toMatchObject({ allowed: false, retryAfterMs: 3_000 });
      limiter.reset();
      expect(limiter.consume(T0 + 2_000)).toMatchObject({ allowed: true, remaining: 1 });
    });
  });

  it('Retry-After and the RateLimit headers report the block', () => {
    const limiter = clockedLimiter({ limit: 2, windowMs: 1_000, blockDurationMs: 90_000, name: 'login' });
    limiter.consume(T0);
    limiter.consume(T0);
    const refused = limiter.consume(T0);
    expect(retryAfterSeconds(refused)).toBe(90);
    expect(retryAfterSeconds(limiter.consume(T0 + 30_500))).toBe(60);
    const headers = Object.fromEntries(rateLimitHeaders(limiter.peek(T0 + 30_500), resolveHeaderOptions({ standardHeaders: 'draft-7', legacyHeaders: false })));
    expect(headers['RateLimit'] ?? headers['ratelimit']).toBe('limit=2, remaining=0, reset=60');
  });

  it('a cost above the capacity blocks too, and reports retryAfterMs Infinity', () => {
    const limiter = clockedLimiter({ limit: 2, windowMs: 1_000, blockDurationMs: 5_000 });
    expect(limiter.consume(T0, 3)).toMatchObject({ allowed: false, retryAfterMs: Infinity });
    expect(limiter.consume(T0 + 1, 1)).toMatchObject({ allowed: false, retryAfterMs: 4_999 });
  });

  it('a block started on a key with no state stores the algorithm state brought to that time: a fixed window opens at the refusal', () => {
    // Without a block, a refusal stores nothing, and the window opens at the first admitted request.
    // With one, something must be stored to carry the block: the window opened at the refusal, empty.
    const limiter = clockedLimiter({ algorithm: 'fixed-window', limit: 1, windowMs: 2_000, blockDurationMs: 1 });
    expect(limiter.consume(T0, 2).allowed).toBe(false); // can never be admitted: blocked 1 ms
    expect(limiter.consume(T0 + 1).allowed).toBe(true); // counted in the window [T0, T0 + 2000)
    expect(limiter.consume(T0 + 1_999).allowed).toBe(false);
    expect(limiter.consume(T0 + 2_000).allowed).toBe(true); // a new window, 1 ms before one opened at T0 + 1 would end
  });

  it('when the algorithm refuses for longer than the block, retryAfterMs is the algorithm’s', () => {
    const limiter = clockedLimiter({ limit: 1, windowMs: 60_000, blockDurationMs: 1_000 });
    limiter.consume(T0);
    expect(limiter.consume(T0)).toMatchObject({ allowed: false, retryAfterMs: 60_000, resetMs: 60_000 });
    // The block has ended, the window has not: refused again, and blocked again.
    expect(limiter.consume(T0 + 59_500)).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
    expect(limiter.consume(T0 + 60_000).allowed).toBe(false);
    expect(limiter.consume(T0 + 60_500).allowed).toBe(true);
  });

  it('0 blocks nothing', () => {
    const limiter = clockedLimiter({ limit: 1, windowMs: 1_000, blockDurationMs: 0 });
    limiter.consume(T0);
    expect(limiter.consume(T0)).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
    expect(limiter.consume(T0 + 1_000).allowed).toBe(true);
  });

  describe('in a policy of several limits', () => {
    const perSecond = resolveLimit({ algorithm: 'gcra', limit: 1, windowMs: 1_000, blockDurationMs: 10_000, name: 'second' }, 'limits[0]');
    const perHour = resolveLimit({ limit: 100, windowMs: 3_600_000, name: 'hour' }, 'limits[1]');
    const policy = [perSecond, perHour];

    it('only the refusing limit records a block; the refusal charges no other limit', () => {
      const first = evaluatePolicy([undefined, undefined], policy, 1, 'consume', T0);
      const states = first.writes as number[][];
      const refused = evaluatePolicy(states, policy, 1, 'consume', T0);
      expect(refused.decision).toMatchObject({ allowed: false, policy: 'second', retryAfterMs: 10_000, resetMs: 10_000, remaining: 0 });
      expect(refused.writes[0]).toEqual([T0 + 1_000, T0 + 10_000]);
      expect(typeof refused.writes[1]).toBe('symbol'); // UNCHANGED
      expect(refused.decision.limits[1]).toMatchObject({ allowed: true, remaining: 99, tokensPaid: 0 });
      expect(refused.decision.limits.map((l) => l.blockedMs)).toEqual([10_000, undefined]);
    });

    it('a refusal by another limit does not block this one', () => {
      const tight = resolveLimit({ limit: 1, windowMs: 3_600_000, name: 'tight' }, 'limits[1]');
      const admitted = evaluatePolicy([undefined, undefined], [perSecond, tight], 1, 'consume', T0);
      const refused = evaluatePolicy(admitted.writes as number[][], [perSecond, tight], 1, 'consume', T0 + 5_000);
      expect(refused.decision.allowed).toBe(false);
      expect(refused.writes.every((w) => typeof w === 'symbol')).toBe(true);
    });
  });

  describe('the state layout', () => {
    it.each<[AlgorithmName, number[]]>([
      ['gcra', [T0]],
      ['delay', [T0]],
      ['fixed-window', [T0, 2]],
      ['token-bucket', [0, T0]],
      ['sliding-window', [T0, 1, 2]],
      ['sliding-log', [T0, 1, T0 + 5, 1]],
      ['sliding-log', []],
    ])('%s %j: one extra number, told apart by length', (algorithm, state) => {
      expect(hasBlock(state, algorithm)).toBe(false);
      const blocked = withBlock(state, T0 + 9_000);
      expect(blocked).toEqual([...state, T0 + 9_000]);
      expect(hasBlock(blocked, algorithm)).toBe(true);
      expect(blockedUntil(blocked, algorithm)).toBe(T0 + 9_000);
      expect(withoutBlock(blocked, algorithm)).toEqual(state);
    });

    it.each(ALGORITHMS)('%s: a blocked state lives (ttlMs) at least until the block ends', (algorithm) => {
      const limit = resolveLimit(blocking(algorithm));
      const state = algorithms[algorithm].step(undefined, limit, 1, T0).next;
      expect(algorithms[algorithm].ttlMs(withBlock(state, T0 + 60_000), limit, T0)).toBe(60_000);
    });

    it('a limit without blockDurationMs ignores a block stored under the same name (a sliding log too)', () => {
      const limit = resolveLimit({ algorithm: 'sliding-log', limit: 2, windowMs: 1_000, name: 'plan' });
      const stored = withBlock([T0, 1], T0 + 5_000);
      const { decision, writes } = evaluatePolicy([stored], [limit], 1, 'consume', T0 + 10);
      expect(decision).toMatchObject({ allowed: true, remaining: 0 });
      expect(writes[0]).toEqual([T0, 1, T0 + 10, 1]);
    });
  });

  it('the memory store does not drop a blocked key when pruning or under a key flood', () => {
    const store = memoryStore({ maxKeys: 10, pruneIntervalMs: 0 });
    const limits = [resolveLimit({ algorithm: 'gcra', limit: 1, windowMs: 100, blockDurationMs: 60_000 })];
    const roomy = [resolveLimit({ algorithm: 'gcra', limit: 10, windowMs: 100 })];
    const ask = (key: string, nowMs: number, policy = limits) => store.evaluate({ key, namespace: '', limits: policy, cost: 1, mode: 'consume', nowMs });
    ask('victim', T0);
    expect(ask('victim', T0).allowed).toBe(false);
    // Its GCRA state is long expired at T0 + 30 s; its block is not.
    expect(store.prune(T0 + 30_000)).toBe(0);
    // A flood of keys with budget left: the blocked key (nothing left) is kept aside, not dropped.
    for (let i = 0; i < 100; i++) ask(`flood-${i}`, T0 + 30_000, roomy);
    expect(ask('victim', T0 + 30_000)).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
    store.dispose();
  });

  it('property: after a refusal at t that starts a block, every consume in [t, t + blockDurationMs) is refused and charges nothing, then the limit is as the algorithm left it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALGORITHMS),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 10, max: 5_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        // Costs the limit can admit: a cost above the capacity on a key with no live state stores a
        // state to carry the block, which the algorithm alone would not (the test above).
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 3_000 }), cost: fc.constantFrom(0, 0.5, 1, 1, 1, 2) }), { minLength: 1, maxLength: 40 }),
        (algorithm, limit, windowMs, blockDurationMs, draws) => {
          const requests = draws.map(({ dt, cost }) => ({ dt, cost: Math.min(cost, limit) }));
          const options: LimitOptions = { algorithm, limit, windowMs, blockDurationMs, ...(algorithm === 'delay' ? { burst: limit } : {}) };
          const limiter = clockedLimiter(options);
          const twin = clockedLimiter({ ...options, blockDurationMs: 0 });
          let t = T0;
          let blockedUntilMs = -Infinity;
          for (const { dt, cost } of requests) {
            t += dt;
            const peeked = limiter.peek(t, cost);
            const d = limiter.consume(t, cost);
            if (t < blockedUntilMs) {
              // Blocked: refused, nothing charged, told when it ends (at least).
              expect(d.allowed).toBe(false);
              expect(d.remaining).toBe(0);
              expect(d.limits[0]!.tokensPaid).toBe(0);
              if (d.retryAfterMs !== Infinity) expect(d.retryAfterMs).toBeGreaterThanOrEqual(blockedUntilMs - t - 1e-6);
              expect(d.resetMs).toBeGreaterThanOrEqual(blockedUntilMs - t - 1e-6);
              expect(peeked.allowed).toBe(false);
              continue;
            }
            // Not blocked: the algorithm decides, as it would without a block.
            const plain = twin.consume(t, cost);
            expect(d.allowed).toBe(plain.allowed);
            if (!d.allowed) {
              blockedUntilMs = t + blockDurationMs;
              if (d.retryAfterMs !== Infinity) expect(d.retryAfterMs).toBeGreaterThanOrEqual(blockDurationMs);
              expect(d.resetMs).toBeGreaterThanOrEqual(blockDurationMs - 1e-6);
              // The refusal reports what a peek right after it reports.
              const after = limiter.peek(t, cost);
              expect([after.allowed, after.remaining, after.resetMs]).toEqual([false, d.remaining, d.resetMs]);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
