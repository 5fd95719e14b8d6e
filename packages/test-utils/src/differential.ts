import {
  ALGORITHMS,
  type AlgorithmName,
  type Decision,
  type EvaluateMode,
  type LimitOptions,
  type MaybePromise,
  memoryStore,
  type RateLimitStore,
  type ResolvedLimit,
  resolveLimit,
} from '@ratekit/core';
import fc from 'fast-check';
import { freshNamespace } from './test-store.js';

/** One request of a schedule: wait `dtMs` (on the fixed clock), then ask with `cost` in `mode`. */
export interface ScheduledRequest {
  readonly dtMs: number;
  readonly cost: number;
  readonly mode: EvaluateMode;
}

/** A policy and the requests to send it, starting at `startMs`. */
export interface Schedule {
  readonly limits: readonly LimitOptions[];
  readonly startMs: number;
  readonly requests: readonly ScheduledRequest[];
}

/** Options of {@link testDifferential}. */
export interface DifferentialOptions {
  /** The store's name in the test titles. */
  name: string;
  /** Makes the store under test, once; it must use the caller's clock (`clock: 'caller'`). */
  makeStore: () => MaybePromise<RateLimitStore>;
  /** Called once after the tests. @default calls `store.dispose()` when there is one */
  disposeStore?: (store: RateLimitStore) => MaybePromise<void>;
  /** Random schedules per algorithm (and for mixed policies). @default the `RATEKIT_DIFFERENTIAL_RUNS` environment variable, else 40 */
  runs?: number;
  /** fast-check seed, to replay a failure. @default random (fast-check prints it on failure) */
  seed?: number;
}

/** Relative float tolerance of the comparison; identical arithmetic gives identical doubles, this only forgives a last-bit difference. */
const TOLERANCE = 1e-9;

/**
 * Differential tests: for each algorithm, and for mixed multi-limit
 * policies, random request schedules (fast-check) run on a fresh in-memory
 * store and on the store under test, on the same fixed clock, must give the
 * same decisions: `allowed`, `remaining`, `retryAfterMs`, `resetMs`,
 * `delayMs`, the binding policy, and every limit's token counts, within a
 * float tolerance. On a difference, fast-check shrinks the schedule and
 * prints it with its seed.
 *
 * @example
 * ```ts
 * testDifferential({ name: 'redis', makeStore: () => redisStore({ client, clock: 'caller' }) });
 * ```
 */
export function testDifferential(options: DifferentialOptions): void {
  const runs = options.runs ?? (Number(process.env.RATEKIT_DIFFERENTIAL_RUNS) || 40);
  describe(`${options.name} store (differential, against the in-memory store)`, () => {
    let current: RateLimitStore | undefined;
    beforeAll(async () => {
      current = await options.makeStore();
      if (current.clock !== 'caller') throw new Error(`testDifferential needs a caller-clock store; ${current.name} uses the ${current.clock} clock`);
    }, 30_000);
    afterAll(async () => {
      if (current === undefined) return;
      if (options.disposeStore !== undefined) await options.disposeStore(current);
      else await current.dispose?.();
    }, 30_000);

    const check = async (arbitrary: fc.Arbitrary<Schedule>) => {
      await fc.assert(
        fc.asyncProperty(arbitrary, (schedule) => compareSchedule(current!, schedule)),
        { numRuns: runs, ...(options.seed === undefined ? {} : { seed: options.seed }) },
      );
    };

    it.each(ALGORITHMS)('%s: random schedules give the same decisions', (algorithm) => check(scheduleArbitrary([algorithm])), 120_000);

    it('mixed policies of two or three limits give the same decisions', () => check(mixedScheduleArbitrary()), 120_000);
  });
}

/**
 * Runs `schedule` on a fresh in-memory store and on `store` (in a fresh
 * namespace) and throws, naming the request, on the first decision that
 * differs. Resolves when every decision agrees.
 */
export async function compareSchedule(store: RateLimitStore, schedule: Schedule): Promise<void> {
  const reference = memoryStore({ maxKeys: 16, pruneIntervalMs: 0 });
  const namespace = freshNamespace('diff');
  const resolved: readonly ResolvedLimit[] = schedule.limits.map((l, i) => resolveLimit(l, `limits[${i}]`));
  let nowMs = schedule.startMs;
  try {
    for (let i = 0; i < schedule.requests.length; i++) {
      const { dtMs, cost, mode } = schedule.requests[i]!;
      nowMs += dtMs;
      const request = { key: 'k', namespace, limits: resolved, cost, mode, nowMs };
      const expected = reference.evaluate(request);
      const actual = await store.evaluate(request);
      const difference = differ(expected, actual);
      if (difference !== undefined) {
        throw new Error(`Request #${i} (${mode}, cost ${cost}, at start + ${nowMs - schedule.startMs} ms) differs at ${difference}:\n  memory: ${show(expected)}\n  ${store.name}: ${show(actual)}`);
      }
    }
  } finally {
    reference.dispose();
    await store.resetKey('k', namespace);
  }
}

/** The path of the first field where two decisions differ, or undefined when they agree. */
export function differ(expected: Decision, actual: Decision): string | undefined {
  const top = ['allowed', 'limit', 'remaining', 'resetMs', 'retryAfterMs', 'delayMs', 'cost', 'nowMs', 'policy'] as const;
  for (const field of top) if (!same(expected[field], actual[field])) return field;
  if (expected.limits.length !== actual.limits.length) return 'limits.length';
  for (let i = 0; i < expected.limits.length; i++) {
    const e = expected.limits[i]!;
    const a = actual.limits[i]!;
    for (const field of Object.keys(e) as Array<keyof typeof e>) if (!same(e[field], a[field])) return `limits[${i}].${field}`;
  }
  return undefined;
}

function same(expected: unknown, actual: unknown): boolean {
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (expected === actual) return true;
    if (!Number.isFinite(expected) || !Number.isFinite(actual)) return false;
    return Math.abs(expected - actual) <= TOLERANCE * Math.max(1, Math.abs(expected));
  }
  return expected === actual;
}

function show(decision: Decision): string {
  return JSON.stringify(decision, (_, value) => (value === Infinity ? 'Infinity' : value));
}

/** Options of {@link limitArbitrary} and {@link scheduleArbitrary}. */
export interface ArbitraryOptions {
  /** Draw `blockDurationMs` too (a quarter of the limits get one). Off for stores that refuse blocks (`@ratekit/synced`). @default true */
  blocks?: boolean;
}

/** Random limits of one algorithm, with the options that algorithm takes. */
export function limitArbitrary(algorithm: AlgorithmName, name?: string, options: ArbitraryOptions = {}): fc.Arbitrary<LimitOptions> {
  const base = fc.record({
    limit: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constantFrom(2.5, 7.5)),
    windowMs: fc.oneof(fc.integer({ min: 50, max: 5_000 }), fc.integer({ min: 5_000, max: 3_600_000 })),
  });
  const bucket = algorithm === 'token-bucket' || algorithm === 'gcra' || algorithm === 'delay';
  return base.chain(({ limit, windowMs }) =>
    fc
      .record({
        burst: bucket ? fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }) : fc.constant(undefined),
        refill: algorithm === 'token-bucket' ? fc.constantFrom<'continuous' | 'interval'>('continuous', 'interval') : fc.constant(undefined),
        maxDelayMs: algorithm === 'delay' ? fc.option(fc.integer({ min: 0, max: 2 * windowMs }), { nil: undefined }) : fc.constant(undefined),
        refusedPenaltyCapMs: algorithm === 'delay' ? fc.option(fc.integer({ min: 0, max: 3 * windowMs }), { nil: undefined }) : fc.constant(undefined),
        blockDurationMs: options.blocks === false ? fc.constant(undefined) : fc.option(fc.integer({ min: 0, max: 3 * windowMs }), { nil: undefined, freq: 3 }),
      })
      .map((extra) => {
        const options: LimitOptions = { algorithm, limit, windowMs };
        if (extra.burst !== undefined) options.burst = extra.burst;
        if (extra.refill !== undefined) options.refill = extra.refill;
        if (extra.maxDelayMs !== undefined) options.maxDelayMs = extra.maxDelayMs;
        if (extra.refusedPenaltyCapMs !== undefined) options.refusedPenaltyCapMs = extra.refusedPenaltyCapMs;
        if (extra.blockDurationMs !== undefined) options.blockDurationMs = extra.blockDurationMs;
        if (name !== undefined) options.name = name;
        return options;
      }),
  );
}

/** Random requests: mostly consumes of small (some fractional) costs, some peeks and refunds, with gaps from 0 to several windows. */
export function requestsArbitrary(maxLength = 40): fc.Arbitrary<ScheduledRequest[]> {
  const request = fc.record({
    dtMs: fc.oneof(
      { arbitrary: fc.constant(0), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 50 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 5_000 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 4_000_000 }), weight: 1 },
    ),
    cost: fc.oneof({ arbitrary: fc.constant(1), weight: 6 }, { arbitrary: fc.integer({ min: 0, max: 5 }), weight: 3 }, { arbitrary: fc.constantFrom(0.5, 1.5, 0.1, 2.25), weight: 1 }),
    mode: fc.oneof(
      { arbitrary: fc.constant<EvaluateMode>('consume'), weight: 8 },
      { arbitrary: fc.constant<EvaluateMode>('peek'), weight: 1 },
      { arbitrary: fc.constant<EvaluateMode>('refund'), weight: 1 },
    ),
  });
  return fc.array(request, { minLength: 1, maxLength });
}

/** Start times spread over a day after 2023-11-14, so window alignment varies. */
const startArbitrary = fc.integer({ min: 0, max: 86_400_000 }).map((offset) => 1_700_000_000_000 + offset);

/** Schedules for a policy with one limit per given algorithm. */
export function scheduleArbitrary(algorithms: readonly AlgorithmName[], options: ArbitraryOptions = {}): fc.Arbitrary<Schedule> {
  const named = algorithms.length > 1;
  return fc.record({
    limits: fc.tuple(...algorithms.map((a, i) => limitArbitrary(a, named ? `l${i}` : undefined, options))),
    startMs: startArbitrary,
    requests: requestsArbitrary(),
  });
}

/** Schedules for policies of two or three limits of random algorithms. */
export function mixedScheduleArbitrary(): fc.Arbitrary<Schedule> {
  return fc.array(fc.constantFrom(...ALGORITHMS), { minLength: 2, maxLength: 3 }).chain((algorithms) => scheduleArbitrary(algorithms));
}
