/**
 * Test support for the algorithm specifications (`algorithms/<algorithm>.test.ts`): not
 * exported from the package and not part of the build (tsup bundles from
 * `src/index.ts` only).
 *
 * - {@link stepRows} runs a timeline table through `algorithm.step` directly.
 * - {@link clockedLimiter} runs one through `createLimiter` on a fixed clock.
 * - {@link replay} and the `check*` helpers back the fast-check properties.
 *
 * State is threaded the way `evaluatePolicy` does for a one-limit policy:
 * `next` when admitted, `nextIfRefused` (or the state unchanged) when refused.
 */
import fc from 'fast-check';
import type { Decision } from '../decision';
import { type LimitOptions, type ResolvedLimit, resolveLimit } from '../limit';
import { createLimiter } from '../limiter';
import { memoryStore } from '../stores/memory';
import type { MaybePromise } from '../stores/types';
import type { Algorithm, LimitState, Step } from '../algorithms/types';

/** Numbers are compared to 6 decimals: the tables state ms and tokens, not float noise. */
export function rounded<T>(value: T): T {
  if (typeof value === 'number') return (Number.isFinite(value) ? Number(value.toFixed(6)) + 0 : value) as T;
  if (Array.isArray(value)) return value.map(rounded) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)])) as T;
  }
  return value;
}

/** The state `evaluatePolicy` keeps after `step`, for a one-limit policy. */
export function threaded(before: LimitState | undefined, step: Step): LimitState | undefined {
  if (step.allowed) return step.next;
  return step.nextIfRefused === undefined ? before : step.nextIfRefused;
}

/** One row of a step-level timeline: the hit, then the outcomes to check (only those given are compared). */
export interface StepRow {
  readonly t: number;
  readonly cost: number;
  readonly allowed: boolean;
  readonly tokensAfter?: number;
  readonly retryAfterMs?: number;
  readonly resetMs?: number;
  readonly delayMs?: number;
  /** The state kept after this row. */
  readonly state?: LimitState | undefined;
}

/**
 * Runs `rows` through `algorithm.step` from `initial`, threading state, and
 * returns the observed rows with the same columns as the expected ones, so
 * `expect(stepRows(...)).toEqual(rounded(rows))` prints the whole table on failure.
 */
export function stepRows(algorithm: Algorithm, limit: ResolvedLimit, rows: readonly StepRow[], initial?: LimitState): StepRow[] {
  let state = initial;
  return rows.map((row) => {
    const step = algorithm.step(state, limit, row.cost, row.t);
    state = threaded(state, step);
    const seen: Record<string, unknown> = { t: row.t, cost: row.cost, allowed: step.allowed };
    for (const column of ['tokensAfter', 'retryAfterMs', 'resetMs', 'delayMs'] as const) {
      if (column in row) seen[column] = step[column];
    }
    if ('state' in row) seen.state = state === undefined ? undefined : [...state];
    return rounded(seen as unknown as StepRow);
  });
}

/** The in-memory path answers synchronously; fail loudly if it ever does not. */
export function sync(result: MaybePromise<Decision>): Decision {
  if (result instanceof Promise) throw new Error('the memory store answered with a Promise');
  return result;
}

/** A limiter on its own memory store whose clock reads the `t` of the last call. Key `k`. */
export function clockedLimiter(limits: LimitOptions | LimitOptions[]) {
  let t = 0;
  const limiter = createLimiter({ limits, now: () => t, store: memoryStore({ maxKeys: 100, pruneIntervalMs: 0 }) });
  return {
    consume(tMs: number, cost = 1): Decision {
      t = tMs;
      return sync(limiter.consume('k', { cost }));
    },
    peek(tMs: number, cost = 1): Decision {
      t = tMs;
      return sync(limiter.peek('k', { cost }));
    },
    refund(tMs: number, cost = 1): Decision {
      t = tMs;
      return sync(limiter.refund('k', { cost }));
    },
    /** Forgets the key (`limiter.reset`). */
    reset(): void {
      void limiter.reset('k');
    },
  };
}

/** The top-level decision fields a limiter table states. */
export function summary(d: Decision) {
  return rounded({ allowed: d.allowed, remaining: d.remaining, retryAfterMs: d.retryAfterMs, resetMs: d.resetMs, delayMs: d.delayMs });
}

/** One hit of a generated schedule, with the state before and after it. */
export interface Event {
  readonly t: number;
  readonly cost: number;
  readonly before: LimitState | undefined;
  readonly step: Step;
  readonly after: LimitState | undefined;
}

/**
 * Replays hits `[t, cost]` (times non-decreasing) through `algorithm.step`.
 * Every state handed to `step` is frozen and compared with a copy afterwards,
 * so a step that mutates its input fails the property.
 */
export function replay(algorithm: Algorithm, limit: ResolvedLimit, hits: ReadonlyArray<readonly [number, number]>): Event[] {
  const events: Event[] = [];
  let state: LimitState | undefined;
  for (const [t, cost] of hits) {
    const before = state === undefined ? undefined : Object.freeze([...state]);
    const copy = state === undefined ? undefined : [...state];
    const step = algorithm.step(before, limit, cost, t);
    if (before !== undefined) expect([...before]).toEqual(copy);
    state = threaded(before, step);
    events.push({ t, cost, before, step, after: state });
  }
  return events;
}

/** The admitted events, as `[t, cost]`. */
export function admitted(events: readonly Event[]): Array<[number, number]> {
  return events.filter((e) => e.step.allowed).map((e) => [e.t, e.cost]);
}

/** Absolute hit times from gaps, starting at `startMs`. */
export function schedule(startMs: number, gaps: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  let t = startMs;
  return gaps.map(([gap, cost]) => {
    t += gap;
    return [t, cost];
  });
}

/**
 * Gaps and costs: bursts (gap 0) mixed with gaps up to `maxGapMs`, costs
 * from `costs`. Up to 60 hits.
 */
export function gapsArb(maxGapMs: number, costs: fc.Arbitrary<number>): fc.Arbitrary<Array<[number, number]>> {
  const gap = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: Math.max(1, Math.floor(maxGapMs / 10)) }), fc.integer({ min: 0, max: maxGapMs }));
  return fc.array(fc.tuple(gap, costs), { minLength: 1, maxLength: 60 });
}

/** Costs of 1 to `max` units, sometimes halves, to exercise non-integer token counts. */
export function costArb(max: number): fc.Arbitrary<number> {
  return fc.oneof({ arbitrary: fc.integer({ min: 1, max }), weight: 4 }, { arbitrary: fc.integer({ min: 1, max: 2 * max }).map((h) => h / 2), weight: 1 });
}

/** A resolved limit, for step-level tests. */
export function limitOf(options: LimitOptions): ResolvedLimit {
  return resolveLimit(options);
}

/** Refusals keep the state as it was: `nextIfRefused` is undefined. */
export function checkRefusalsChargeNothing(events: readonly Event[]): void {
  for (const e of events) if (!e.step.allowed) expect({ t: e.t, nextIfRefused: e.step.nextIfRefused }).toEqual({ t: e.t, nextIfRefused: undefined });
}

/**
 * `retryAfterMs` is honest: from the state a refusal left, the same cost is
 * admitted at `t + retryAfterMs` and refused 1 ms earlier (when that is
 * still after `t`); `Infinity` exactly when `neverFits(cost)`.
 */
export function checkRetryAfter(algorithm: Algorithm, limit: ResolvedLimit, events: readonly Event[], neverFits: (cost: number) => boolean): void {
  for (const e of events) {
    if (e.step.allowed) continue;
    const retry = e.step.retryAfterMs;
    expect({ t: e.t, cost: e.cost, infinite: retry === Infinity }).toEqual({ t: e.t, cost: e.cost, infinite: neverFits(e.cost) });
    if (retry === Infinity) continue;
    expect(retry).toBeGreaterThan(0);
    const then = algorithm.step(e.after, limit, e.cost, e.t + retry);
    expect({ t: e.t, retry, admittedThen: then.allowed }).toEqual({ t: e.t, retry, admittedThen: true });
    if (retry > 1) {
      const early = algorithm.step(e.after, limit, e.cost, e.t + retry - 1);
      expect({ t: e.t, retry, admitted1msEarlier: early.allowed }).toEqual({ t: e.t, retry, admitted1msEarlier: false });
    }
  }
}

/**
 * Refunds never go beyond full capacity and never take tokens away: after
 * refunding `amount` at the time of each event, the level is between the
 * level before and `capacity`.
 */
export function checkRefunds(algorithm: Algorithm, limit: ResolvedLimit, events: readonly Event[], amount: number): void {
  for (const e of events) {
    const before = algorithm.step(e.after, limit, 0, e.t).tokensAfter;
    const frozen = e.after === undefined ? undefined : Object.freeze([...e.after]);
    const refunded = algorithm.refund(frozen, limit, amount, e.t);
    const after = algorithm.step(refunded, limit, 0, e.t);
    expect(after.tokensAfter).toBeLessThanOrEqual(after.capacity + 1e-9);
    expect(after.tokensAfter).toBeGreaterThanOrEqual(before - 1e-9);
  }
}

/** What {@link itKeepsTheStepContract} needs to know of one algorithm's property tests. */
export interface StepContract<P extends { start: number }> {
  algorithm: Algorithm;
  /** Random parameters and the gaps (ms) and costs of a request schedule starting at `p.start`. */
  cases: fc.Arbitrary<[P, Array<[number, number]>]>;
  limitFor: (p: P) => ResolvedLimit;
  /** When a cost can never be admitted, and how the test title says it ("cost > limit"). */
  neverFits: { when: (p: P, cost: number) => boolean; title: string };
  /** What a refund never goes beyond, for the test title ("the burst nor takes tokens away"). */
  refundTitle: string;
  /** The largest refund tried. */
  maxRefund: number;
  /** False when the algorithm states its own refusal property (delay mode's penalty). */
  refusalsChargeNothing?: boolean;
}

/**
 * Registers the properties every algorithm keeps, whatever its bound: a
 * refusal charges nothing, `retryAfterMs` is honest, refunds never overfill.
 * Call it inside a `describe`.
 */
export function itKeepsTheStepContract<P extends { start: number }>(spec: StepContract<P>): void {
  const { algorithm, cases, limitFor } = spec;
  const events = (p: P, gaps: Array<[number, number]>) => replay(algorithm, limitFor(p), schedule(p.start, gaps));
  if (spec.refusalsChargeNothing !== false) {
    it('never changes state on a refusal and never mutates the state it is given (frozen)', () => {
      fc.assert(fc.property(cases, ([p, gaps]) => checkRefusalsChargeNothing(events(p, gaps))));
    });
  }
  it(`gives an honest retryAfterMs: admitted then, refused 1 ms earlier, Infinity exactly when ${spec.neverFits.title}`, () => {
    fc.assert(fc.property(cases, ([p, gaps]) => checkRetryAfter(algorithm, limitFor(p), events(p, gaps), (cost) => spec.neverFits.when(p, cost))));
  });
  it(`never refunds beyond ${spec.refundTitle}`, () => {
    fc.assert(fc.property(cases, fc.integer({ min: 0, max: spec.maxRefund }), ([p, gaps], amount) => checkRefunds(algorithm, limitFor(p), events(p, gaps), amount)));
  });
}

/** The most cost admitted in any half-open window `[a, a + windowMs)`. */
export function maxInWindow(hits: ReadonlyArray<readonly [number, number]>, windowMs: number): number {
  let max = 0;
  for (let i = 0; i < hits.length; i++) {
    let sum = 0;
    for (let j = i; j < hits.length && hits[j]![0] < hits[i]![0] + windowMs; j++) sum += hits[j]![1];
    max = Math.max(max, sum);
  }
  return max;
}

/**
 * Asserts `bound(d, first)` for every closed interval between two admitted
 * hits: the cost admitted within `[tᵢ, tⱼ]`, with `d = tⱼ − tᵢ` and `first`
 * the cost of hit i, is at most the bound (plus 1e-6 of float slack).
 */
export function checkIntervalBound(hits: ReadonlyArray<readonly [number, number]>, bound: (d: number, first: number) => number): void {
  for (let i = 0; i < hits.length; i++) {
    let sum = 0;
    for (let j = i; j < hits.length; j++) {
      sum += hits[j]![1];
      // Hits at the same time as j belong to the same closed interval: check once the run ends.
      if (j + 1 < hits.length && hits[j + 1]![0] === hits[j]![0]) continue;
      const d = hits[j]![0] - hits[i]![0];
      if (sum > bound(d, hits[i]![1]) + 1e-6) {
        throw new Error(`admitted ${sum} within [${hits[i]![0]}, ${hits[j]![0]}] (d = ${d} ms), bound ${bound(d, hits[i]![1])}`);
      }
    }
  }
}
