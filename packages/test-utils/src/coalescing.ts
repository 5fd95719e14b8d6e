import { ALGORITHMS, type Decision, type EvaluateMode, type EvaluateRequest, type LimitOptions, type MaybePromise, memoryStore, type RateLimitStore, resolveLimit } from '@ratekit/core';
import fc from 'fast-check';
import { differ, limitArbitrary } from './differential.js';
import { freshNamespace } from './test-store.js';

/** One decision of a turn: key `k<key>` under policy `policy` (each policy is a limiter of its own: its own namespace). */
export interface TurnRequest {
  readonly key: number;
  readonly policy: number;
  readonly cost: number;
  readonly mode: EvaluateMode;
}

/** Decisions asked together, in one turn of the event loop, `dtMs` after the previous turn (on the fixed clock). */
export interface Turn {
  readonly dtMs: number;
  readonly requests: readonly TurnRequest[];
}

/** Policies, and turns of concurrent decisions on them. */
export interface TurnSchedule {
  readonly policies: ReadonlyArray<readonly LimitOptions[]>;
  readonly startMs: number;
  readonly turns: readonly Turn[];
}

/** Options of {@link testCoalescing}. */
export interface CoalescingOptions {
  /** The store's name in the test titles. */
  name: string;
  /** Makes the store under test, once: one that coalesces the decisions asked in one turn (e.g. `redisStore({ client, clock })`). */
  makeStore: () => MaybePromise<RateLimitStore>;
  /**
   * Makes the reference, once, asked one decision at a time, in the same
   * order. On the caller's clock, by default a fresh in-memory store per
   * schedule; on the server clock, give the same store without coalescing.
   */
  makeReference?: () => MaybePromise<RateLimitStore>;
  /** Called once after the tests for the store and the reference. @default calls `store.dispose()` when there is one */
  disposeStore?: (store: RateLimitStore) => MaybePromise<void>;
  /**
   * `caller` (default): every field of every decision must be the same.
   * `server`: the two stores read the server's clock at different moments, so
   * only `allowed`, `remaining`, each limit's `allowed`, `remaining` and `limit`, and
   * the binding `policy` (up to ties the ms between the runs decide) are compared,
   * on limits of windows of an hour to a day (the ms between the two runs
   * cannot move them).
   */
  clock?: 'caller' | 'server';
  /** Random schedules. @default the `RATEKIT_DIFFERENTIAL_RUNS` environment variable, else 40 */
  runs?: number;
  /** fast-check seed, to replay a failure. @default random */
  seed?: number;
}

/**
 * Coalescing never changes a decision: random turns of concurrent
 * decisions (the same key several times in a turn, several keys and
 * policies, of mixed algorithms, costs and modes) are asked all at once of
 * the store under test, which may send each turn as one call, and one at a
 * time, in the same order, of a reference. Every decision must be the same
 * (see {@link CoalescingOptions.clock}). Each turn's decisions are asked in
 * the same synchronous run, so a store that coalesces a turn sends them
 * together.
 *
 * @example
 * ```ts
 * testCoalescing({ name: 'redis', makeStore: () => redisStore({ client, clock: 'caller' }) });
 * ```
 */
export function testCoalescing(options: CoalescingOptions): void {
  const runs = options.runs ?? (Number(process.env.RATEKIT_DIFFERENTIAL_RUNS) || 40);
  const clock = options.clock ?? 'caller';
  describe(`${options.name} store (coalescing: concurrent decisions against one at a time, ${clock} clock)`, () => {
    let store: RateLimitStore | undefined;
    let reference: RateLimitStore | undefined;
    const dispose = async (s: RateLimitStore | undefined) => {
      if (s === undefined) return;
      if (options.disposeStore !== undefined) await options.disposeStore(s);
      else await s.dispose?.();
    };
    beforeAll(async () => {
      store = await options.makeStore();
      if (store.clock !== clock) throw new Error(`testCoalescing({ clock: '${clock}' }) needs a store on that clock; ${store.name} uses the ${store.clock} clock`);
      if (options.makeReference !== undefined) reference = await options.makeReference();
      else if (clock === 'server') throw new Error('testCoalescing on the server clock needs makeReference');
    }, 30_000);
    afterAll(async () => {
      await dispose(store);
      await dispose(reference);
    }, 30_000);

    it('random turns of concurrent decisions give the same decisions as one at a time', async () => {
      await fc.assert(
        fc.asyncProperty(turnScheduleArbitrary(clock), (schedule) => compareTurns(store!, reference, schedule, clock)),
        { numRuns: runs, ...(options.seed === undefined ? {} : { seed: options.seed }) },
      );
    }, 180_000);
  });
}

/**
 * Runs `schedule` on `store`, each turn's decisions asked at once, and on
 * `reference` (default: a fresh in-memory store), one at a time in the same
 * order; throws, naming the decision, on the first that differs.
 */
export async function compareTurns(store: RateLimitStore, reference: RateLimitStore | undefined, schedule: TurnSchedule, clock: 'caller' | 'server' = 'caller'): Promise<void> {
  const own = reference === undefined ? memoryStore({ maxKeys: 64, pruneIntervalMs: 0 }) : undefined;
  const ref = reference ?? own!;
  const base = freshNamespace('coalesce');
  const policies = schedule.policies.map((p) => p.map((l, i) => resolveLimit(l, `limits[${i}]`)));
  // The reference's namespaces are its own, should both stores share a server.
  const requestOf = (r: TurnRequest, nowMs: number, side: string): EvaluateRequest => ({
    key: `k${r.key}`,
    namespace: `${base}-${side}${r.policy}`,
    limits: policies[r.policy]!,
    cost: r.cost,
    mode: r.mode,
    nowMs,
  });
  let nowMs = schedule.startMs;
  try {
    for (let t = 0; t < schedule.turns.length; t++) {
      const turn = schedule.turns[t]!;
      nowMs += turn.dtMs;
      // All of the turn in one synchronous run: nothing awaited between them.
      const asked = turn.requests.map((r) => Promise.resolve(store.evaluate(requestOf(r, nowMs, 'p'))));
      const actual = await Promise.all(asked);
      for (let i = 0; i < turn.requests.length; i++) {
        const expected = await ref.evaluate(requestOf(turn.requests[i]!, nowMs, 'r'));
        const difference = clock === 'caller' ? differ(expected, actual[i]!) : differOnServerClock(expected, actual[i]!);
        if (difference !== undefined) {
          throw new Error(
            `Turn #${t}, decision #${i} (${JSON.stringify(turn.requests[i])}) differs at ${difference}:\n  one at a time (${ref.name}): ${show(expected)}\n  coalesced (${store.name}): ${show(actual[i]!)}`,
          );
        }
      }
    }
  } finally {
    own?.dispose();
    for (let p = 0; p < policies.length; p++) {
      for (const key of new Set(schedule.turns.flatMap((turn) => turn.requests.filter((r) => r.policy === p).map((r) => `k${r.key}`)))) {
        await store.resetKey(key, `${base}-p${p}`, policies[p]);
        if (reference !== undefined) await reference.resetKey(key, `${base}-r${p}`, policies[p]);
      }
    }
  }
}

/** On the server clock: what the ms between the two runs cannot change. */
function differOnServerClock(expected: Decision, actual: Decision): string | undefined {
  for (const field of ['allowed', 'remaining'] as const) if (expected[field] !== actual[field]) return field;
  if (expected.limits.length !== actual.limits.length) return 'limits';
  for (let i = 0; i < expected.limits.length; i++) {
    for (const field of ['name', 'allowed', 'remaining', 'limit'] as const) if (expected.limits[i]![field] !== actual.limits[i]![field]) return `limits[${i}].${field}`;
  }
  // The binding limit: between limits with as few tokens left, an admission's is the one that resets
  // last, and a refusal's the one that frees last, by ms the two runs see apart (a fixed window's
  // reset 2 ms apart from a sliding log's bound one run and not the other): any limit within those ms
  // of the last may bind. Otherwise it is the same limit.
  const slackMs = Math.abs(expected.nowMs - actual.nowMs) + 1;
  const tied = expected.allowed ? expected.limits.filter((l) => l.remaining === expected.remaining) : expected.limits.filter((l) => !l.allowed);
  const latest = Math.max(...tied.map((l) => (expected.allowed ? l.resetMs : l.retryAfterMs)));
  const candidates = tied.filter((l) => (expected.allowed ? l.resetMs : l.retryAfterMs) >= latest - slackMs).map((l) => l.name);
  if (!candidates.includes(actual.policy)) return 'policy';
  if (actual.limit !== actual.limits.find((l) => l.name === actual.policy)?.limit) return 'limit';
  return undefined;
}

function show(decision: Decision): string {
  return JSON.stringify(decision, (_, value) => (value === Infinity ? 'Infinity' : value));
}

/** A policy: one limit of any algorithm, or two (the second named, so their ids differ). */
function policyArbitrary(clock: 'caller' | 'server'): fc.Arbitrary<LimitOptions[]> {
  const limit = (name?: string) =>
    fc.constantFrom(...ALGORITHMS).chain((algorithm) =>
      limitArbitrary(algorithm, name).map((l) => {
        if (clock === 'caller') return l;
        // Windows of an hour to a day, of 1 to 12: nothing refills or ends in the ms between the two runs.
        const windowMs = 3_600_000 * (1 + (l.windowMs % 24));
        const out: LimitOptions = { ...l, windowMs };
        if (l.maxDelayMs !== undefined) out.maxDelayMs = Math.min(l.maxDelayMs, windowMs);
        // Likewise a refusal's penalty of a few ms (a 4 ms cap ended between the two runs, and the
        // reference admitted what the coalesced store had refused): none, or one of a minute or more.
        if (l.refusedPenaltyCapMs !== undefined) out.refusedPenaltyCapMs = l.refusedPenaltyCapMs < 60_000 ? 0 : Math.min(l.refusedPenaltyCapMs, windowMs);
        // A block of a few ms would end between the two runs (a turn's decisions share one server time): none, or one of the window.
        if (l.blockDurationMs !== undefined) out.blockDurationMs = l.blockDurationMs > 0 ? windowMs : 0;
        return out;
      }),
    );
  return fc.oneof(
    limit().map((l) => [l]),
    fc.tuple(limit(), limit('l1')).map(([a, b]) => [a, b]),
  );
}

/** Concurrent decisions over 3 keys and 3 policies, mostly consumes of small (some fractional) costs. */
export function turnScheduleArbitrary(clock: 'caller' | 'server' = 'caller'): fc.Arbitrary<TurnSchedule> {
  const request = fc.record({
    key: fc.integer({ min: 0, max: 2 }),
    policy: fc.integer({ min: 0, max: 2 }),
    cost: fc.oneof({ arbitrary: fc.constant(1), weight: 6 }, { arbitrary: fc.integer({ min: 0, max: 5 }), weight: 3 }, { arbitrary: fc.constantFrom(0.5, 1.5, 2.25), weight: 1 }),
    mode: fc.oneof(
      { arbitrary: fc.constant<EvaluateMode>('consume'), weight: 8 },
      { arbitrary: fc.constant<EvaluateMode>('peek'), weight: 1 },
      { arbitrary: fc.constant<EvaluateMode>('refund'), weight: 1 },
    ),
  });
  // On the server clock the clock is Redis's: dtMs is not applied, and the turns follow each other at once.
  const dtMs = clock === 'server' ? fc.constant(0) : fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 4_000_000 }));
  return fc.record({
    policies: fc.tuple(policyArbitrary(clock), policyArbitrary(clock), policyArbitrary(clock)),
    startMs: fc.integer({ min: 0, max: 86_400_000 }).map((offset) => 1_700_000_000_000 + offset),
    turns: fc.array(fc.record({ dtMs, requests: fc.array(request, { minLength: 1, maxLength: 12 }) }), { minLength: 1, maxLength: 8 }),
  });
}
