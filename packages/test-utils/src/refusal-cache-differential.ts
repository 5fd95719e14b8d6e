import {
  ALGORITHMS,
  type AlgorithmName,
  createLimiter,
  type Decision,
  type EvaluateMode,
  type EvaluateRequest,
  type LimitOptions,
  type Limiter,
  memoryStore,
  type RateLimitStore,
} from '@ratekit/core';
import fc from 'fast-check';
import { type DifferentialOptions, differ, limitArbitrary, requestsArbitrary } from './differential.js';
import { freshNamespace } from './test-store.js';

/**
 * The refusal cache's differential test: the same random operations through
 * a limiter with its refusal cache and one without, on the same store (each
 * in its own namespace) and the same fixed clock, must give the same
 * decisions. One process, so no reset is unseen: the answers must be equal.
 */

/** One operation: wait `dtMs`, then `mode` on `key` with `cost`. */
export interface CacheOperation {
  readonly dtMs: number;
  readonly key: string;
  readonly cost: number;
  readonly mode: EvaluateMode | 'reset';
}

/** A policy and the operations to run on it from `startMs`. */
export interface CacheSchedule {
  readonly limits: readonly LimitOptions[];
  readonly startMs: number;
  readonly operations: readonly CacheOperation[];
}

/**
 * Options of {@link testRefusalCacheDifferential}: those of {@link testDifferential}. The store must use the
 * caller's clock (`clock: 'caller'`) and be `shared`, or the limiter keeps no refusals.
 */
export type RefusalCacheDifferentialOptions = DifferentialOptions;

/** What a run saw: how many answers came from the cache, so a test can show the cache was exercised. */
export interface CacheRunCounts {
  decisions: number;
  cached: number;
  /** Answers from the cache that were a blocked limit's refusal (a limit's `blockedMs` set). */
  cachedBlocked: number;
}

/**
 * Durations a cached answer shortens by the elapsed time (`r − elapsed`)
 * while the store computes them afresh from epoch-ms floats, whose last
 * bit near 2023 is 0.24 µs: they may differ by a few ulps of the epoch.
 */
const DURATION_TOLERANCE_MS = 0.01;

/**
 * Registers the refusal cache's differential tests for a store: for each
 * algorithm and for mixed policies, random schedules (several keys, mixed
 * and fractional costs, consume / peek / refund / reset, time gaps from 0
 * to hours, blocks and delay penalties among the limits) through a limiter
 * with `refusalCache` and one with `refusalCache: false`. Every decision
 * must agree; each test also asserts the cache answered some of them.
 *
 * @example
 * ```ts
 * testRefusalCacheDifferential({ name: 'redis', makeStore: () => redisStore({ client, clock: 'caller' }) });
 * ```
 */
export function testRefusalCacheDifferential(options: RefusalCacheDifferentialOptions): void {
  const runs = options.runs ?? (Number(process.env.RATEKIT_DIFFERENTIAL_RUNS) || 40);
  describe(`${options.name} store (refusal cache differential: with and without the cache)`, () => {
    let current: RateLimitStore | undefined;
    beforeAll(async () => {
      current = await options.makeStore();
      if (current.clock !== 'caller') throw new Error(`testRefusalCacheDifferential needs a caller-clock store; ${current.name} uses the ${current.clock} clock`);
      if (!current.shared) throw new Error(`testRefusalCacheDifferential needs a shared store; wrap ${current.name} with sharedMemoryStore()`);
    }, 30_000);
    afterAll(async () => {
      if (current === undefined) return;
      if (options.disposeStore !== undefined) await options.disposeStore(current);
      else await current.dispose?.();
    }, 30_000);

    const check = async (arbitrary: fc.Arbitrary<CacheSchedule>) => {
      const counts: CacheRunCounts = { decisions: 0, cached: 0, cachedBlocked: 0 };
      await fc.assert(
        fc.asyncProperty(arbitrary, (schedule) => compareWithRefusalCache(current!, schedule, counts)),
        { numRuns: runs, ...(options.seed === undefined ? {} : { seed: options.seed }) },
      );
      // Not vacuous: the cache answered some of the decisions compared, blocked refusals among them.
      expect(counts.cached).toBeGreaterThan(0);
      expect(counts.cachedBlocked).toBeGreaterThan(0);
    };

    it.each(ALGORITHMS)('%s: random operations give the same decisions with the cache as without', (algorithm) => check(cacheScheduleArbitrary([algorithm])), 180_000);

    it(
      'mixed policies of two or three limits give the same decisions with the cache as without',
      () => check(fc.array(fc.constantFrom(...ALGORITHMS), { minLength: 2, maxLength: 3 }).chain((algorithms) => cacheScheduleArbitrary(algorithms))),
      180_000,
    );
  });
}

/**
 * Runs `schedule` through two limiters on `store` (fresh namespaces, the
 * same fixed clock): one with the refusal cache, one without. Throws,
 * naming the operation, at the first decision that differs: a store answer
 * must agree on every field ({@link differ}); a cached one on every field
 * but the token counts and `nextRefillMs` it carries from the store's
 * answer (`allowed`, `limit`, `remaining`, `policy`, `cost`, `delayMs`,
 * `nowMs`, and each limit's `allowed`, `limit`, `remaining`, and whether it
 * is blocked), its durations (`retryAfterMs`, `resetMs`, each limit's, and
 * each limit's `blockedMs`) within 0.01 ms.
 */
export async function compareWithRefusalCache(store: RateLimitStore, schedule: CacheSchedule, counts?: CacheRunCounts): Promise<void> {
  let nowMs = schedule.startMs;
  const now = () => nowMs;
  const build = (refusalCache: boolean): Limiter => createLimiter({ limits: schedule.limits, store, prefix: freshNamespace('rc'), now, refusalCache, storeTimeoutMs: Number.POSITIVE_INFINITY });
  const cached = build(true);
  const plain = build(false);
  const keys = new Set<string>();
  try {
    for (let i = 0; i < schedule.operations.length; i++) {
      const { dtMs, key, cost, mode } = schedule.operations[i]!;
      nowMs += dtMs;
      keys.add(key);
      if (mode === 'reset') {
        await cached.reset(key);
        await plain.reset(key);
        continue;
      }
      const actual = await cached[mode](key, { cost });
      const expected = await plain[mode](key, { cost });
      const difference = actual.source === 'cache' ? differCached(expected, actual) : differ(expected, actual);
      if (counts !== undefined) {
        counts.decisions++;
        if (actual.source === 'cache') counts.cached++;
        if (actual.source === 'cache' && actual.limits.some((l) => l.blockedMs !== undefined)) counts.cachedBlocked++;
      }
      if (difference !== undefined) {
        throw new Error(
          `Operation #${i} (${mode} ${key}, cost ${cost}, at start + ${nowMs - schedule.startMs} ms) differs at ${difference}:\n  without the cache: ${show(expected)}\n  with the cache: ${show(actual)}`,
        );
      }
    }
  } finally {
    for (const key of keys) {
      await cached.reset(key);
      await plain.reset(key);
    }
  }
}

/** The first field where a cached answer differs from the store's (see {@link compareWithRefusalCache}). */
function differCached(expected: Decision, actual: Decision): string | undefined {
  const exact = ['allowed', 'limit', 'remaining', 'delayMs', 'cost', 'nowMs', 'policy'] as const;
  for (const field of exact) if (expected[field] !== actual[field]) return field;
  for (const field of ['retryAfterMs', 'resetMs'] as const) if (!near(expected[field], actual[field])) return field;
  if (expected.limits.length !== actual.limits.length) return 'limits.length';
  for (let i = 0; i < expected.limits.length; i++) {
    const e = expected.limits[i]!;
    const a = actual.limits[i]!;
    for (const field of ['name', 'allowed', 'limit', 'remaining'] as const) if (e[field] !== a[field]) return `limits[${i}].${field}`;
    for (const field of ['retryAfterMs', 'resetMs'] as const) if (!near(e[field], a[field])) return `limits[${i}].${field}`;
    if ((e.blockedMs === undefined) !== (a.blockedMs === undefined) || !near(e.blockedMs ?? 0, a.blockedMs ?? 0)) return `limits[${i}].blockedMs`;
  }
  return undefined;
}

function near(expected: number, actual: number): boolean {
  return expected === actual || Math.abs(expected - actual) <= DURATION_TOLERANCE_MS;
}

function show(decision: Decision): string {
  return JSON.stringify(decision, (_, value) => (value === Infinity ? 'Infinity' : value));
}

/**
 * Random schedules for a policy of one limit per given algorithm (blocks and
 * delay penalties included): bursts of the same operation, so refusals are
 * asked again within their period, on two keys, with resets among them. A
 * third of the limits are drawn plain (no block, no refused penalty), a
 * third blocking (a block of 1 ms to 3 windows, no refused penalty), a
 * third as {@link limitArbitrary} draws them.
 */
export function cacheScheduleArbitrary(algorithms: readonly AlgorithmName[]): fc.Arbitrary<CacheSchedule> {
  const named = algorithms.length > 1;
  const step = fc.record({
    request: requestsArbitrary(1).map((requests) => requests[0]!),
    key: fc.constantFrom('a', 'a', 'a', 'b'),
    repeat: fc.oneof({ arbitrary: fc.constant(1), weight: 1 }, { arbitrary: fc.integer({ min: 2, max: 12 }), weight: 2 }),
    gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 500 })),
    reset: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  });
  return fc
    .record({
      // Plain and blocking limits (the cache keeps their refusals, a block's until it ends) as well as any.
      limits: fc.tuple(
        ...algorithms.map((a, i) =>
          fc
            .tuple(limitArbitrary(a, named ? `l${i}` : undefined), fc.constantFrom('plain', 'blocking', 'drawn'), fc.integer({ min: 1, max: 3_000 }))
            .map(([limit, kind, permille]) => (kind === 'drawn' ? limit : kind === 'plain' ? withoutPenalties(limit) : blocking(limit, permille))),
        ),
      ),
      startMs: fc.integer({ min: 0, max: 86_400_000 }).map((offset) => 1_700_000_000_000 + offset),
      steps: fc.array(step, { minLength: 1, maxLength: 30 }),
    })
    .map(({ limits, startMs, steps }) => {
      const operations: CacheOperation[] = [];
      for (const { request, key, repeat, gapMs, reset } of steps) {
        if (reset) operations.push({ dtMs: request.dtMs, key, cost: 0, mode: 'reset' });
        for (let r = 0; r < repeat; r++) operations.push({ dtMs: r === 0 ? request.dtMs : gapMs, key, cost: request.cost, mode: request.mode });
      }
      return { limits, startMs, operations };
    });
}

function withoutPenalties(limit: LimitOptions): LimitOptions {
  const { blockDurationMs: _block, refusedPenaltyCapMs: _penalty, ...rest } = limit;
  return rest;
}

/** `limit` without a refused penalty, blocked for `permille` thousandths of its window (at least 1 ms) on a refusal. */
function blocking(limit: LimitOptions, permille: number): LimitOptions {
  return { ...withoutPenalties(limit), blockDurationMs: Math.max(1, Math.round((limit.windowMs * permille) / 1_000)) };
}

/**
 * The in-memory store presented as a shared store (`shared: true`, answers
 * as Promises), so the refusal cache, which serves only shared stores, can
 * be tested without a server. `calls` lists the decisions it was asked for.
 */
export function sharedMemoryStore(): RateLimitStore & { readonly calls: EvaluateRequest[] } {
  const inner = memoryStore({ maxKeys: 10_000, pruneIntervalMs: 0 });
  const calls: EvaluateRequest[] = [];
  return {
    name: 'memory (shared)',
    shared: true,
    clock: 'caller',
    calls,
    evaluate: (request) => {
      calls.push(request);
      return Promise.resolve(inner.evaluate(request));
    },
    resetKey: (key, namespace) => Promise.resolve(inner.resetKey(key, namespace)),
    dispose: () => inner.dispose(),
  };
}
