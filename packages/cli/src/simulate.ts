/**
 * The simulator: replays traffic through ratekit's real limiter (core's
 * `createLimiter` and in-memory store) on an injected clock, one limiter per
 * algorithm, and summarises what each admitted.
 *
 * @module
 */
import { type AlgorithmName, ALGORITHMS, createLimiter, type LimitOptions, memoryStore, retryAfterSeconds } from '@ratekit/core';
import type { Traffic, TrafficEvent } from './patterns.js';

/** The six algorithms, in the order the charts and summaries list them. */
export const ALGORITHM_ORDER: readonly AlgorithmName[] = ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra', 'delay'];

/** The limit every algorithm is given. */
export interface LimitSettings {
  /** Quota per window (`limit`). */
  readonly limit: number;
  /** Window or refill period, ms (`windowMs`). */
  readonly windowMs: number;
  /** Capacity of token-bucket, gcra and delay (`burst`); core's default when unset. */
  readonly burst?: number | undefined;
  /** `delay` only: the longest a request may be held (`maxDelayMs`); core's default (`windowMs`) when unset. */
  readonly maxDelayMs?: number | undefined;
}

/** What one algorithm decided about one request. */
export interface Outcome {
  readonly event: TrafficEvent;
  readonly allowed: boolean;
  /** When an admitted request passes: its arrival plus the `delay` algorithm's `delayMs` (arrival otherwise). */
  readonly passMs: number;
  readonly delayMs: number;
  /** The decision's `retryAfterMs` (0 when admitted, `Infinity` when the cost can never pass). */
  readonly retryAfterMs: number;
  /** `Retry-After` as a header would send it (core's `retryAfterSeconds`: whole seconds, rounded up, ≥ 1); undefined when admitted. */
  readonly retryAfterSeconds: number | undefined;
}

/** The numbers the text and JSON summaries show for one algorithm. */
export interface Summary {
  readonly algorithm: AlgorithmName;
  /** Requests offered. */
  readonly offered: number;
  /** Requests admitted (for `delay`, including the ones held before passing). */
  readonly admitted: number;
  readonly refused: number;
  /**
   * The most units admitted (sum of costs) to one key within any half-open
   * interval `[t, t + windowMs)`, counting each admission when it passes.
   */
  readonly maxAdmittedInWindow: number;
  /** The largest `Retry-After` (seconds) of a refusal; null when nothing was refused. */
  readonly worstRetryAfterSeconds: number | null;
  /** The largest `retryAfterMs` of a refusal (may be Infinity); null when nothing was refused. */
  readonly worstRetryAfterMs: number | null;
  /** The longest an admitted request was held (`delay` only; 0 for the others). */
  readonly worstDelayMs: number;
}

/** One algorithm's run over the traffic. */
export interface AlgorithmRun {
  readonly algorithm: AlgorithmName;
  /** The limit passed to `createLimiter`. */
  readonly limit: LimitOptions;
  readonly outcomes: readonly Outcome[];
  readonly summary: Summary;
}

/** The limit options for an algorithm: `burst` and `maxDelayMs` only where the algorithm takes them. */
export function limitFor(algorithm: AlgorithmName, settings: LimitSettings): LimitOptions {
  const options: { -readonly [K in keyof LimitOptions]: LimitOptions[K] } = { algorithm, limit: settings.limit, windowMs: settings.windowMs };
  if (settings.burst !== undefined && (algorithm === 'token-bucket' || algorithm === 'gcra' || algorithm === 'delay')) options.burst = settings.burst;
  if (settings.maxDelayMs !== undefined && algorithm === 'delay') options.maxDelayMs = settings.maxDelayMs;
  return options;
}

/**
 * Replays `traffic` through one limiter per algorithm. The clock is set to
 * each request's time before it is decided; requests arrive in time order
 * (ties in the order given). Deterministic: no timer, no real clock.
 */
export function simulate(traffic: Traffic, algorithms: readonly AlgorithmName[], settings: LimitSettings): AlgorithmRun[] {
  return algorithms.map((algorithm) => runOne(traffic.events, algorithm, settings));
}

function runOne(events: readonly TrafficEvent[], algorithm: AlgorithmName, settings: LimitSettings): AlgorithmRun {
  if (!ALGORITHMS.includes(algorithm)) throw new TypeError(`unknown algorithm ${algorithm}`);
  let clock = 0;
  const keys = new Set(events.map((event) => event.key)).size;
  // No prune timer, and room for every key: the simulation must not lose state to eviction.
  const store = memoryStore({ maxKeys: Math.max(1_000, keys), pruneIntervalMs: 0 });
  const limit = limitFor(algorithm, settings);
  const limiter = createLimiter({ limits: limit, store, now: () => clock });
  const outcomes: Outcome[] = [];
  try {
    for (const event of events) {
      clock = event.t;
      const decision = limiter.consume(event.key, { cost: event.cost });
      // The in-memory store decides synchronously (core's contract): the clock cannot move under a decision.
      if (decision instanceof Promise) throw new Error('the in-memory store answered asynchronously');
      outcomes.push({
        event,
        allowed: decision.allowed,
        passMs: event.t + (decision.allowed ? decision.delayMs : 0),
        delayMs: decision.allowed ? decision.delayMs : 0,
        retryAfterMs: decision.retryAfterMs,
        retryAfterSeconds: decision.allowed ? undefined : retryAfterSeconds(decision),
      });
    }
  } finally {
    store.dispose();
  }
  return { algorithm, limit, outcomes, summary: summarize(algorithm, outcomes, settings.windowMs) };
}

/** The summary of one algorithm's outcomes (see {@link Summary}). */
export function summarize(algorithm: AlgorithmName, outcomes: readonly Outcome[], windowMs: number): Summary {
  let admitted = 0;
  let worstRetryAfterSeconds: number | null = null;
  let worstRetryAfterMs: number | null = null;
  let worstDelayMs = 0;
  const passes = new Map<string, Array<[number, number]>>();
  for (const outcome of outcomes) {
    if (outcome.allowed) {
      admitted++;
      worstDelayMs = Math.max(worstDelayMs, outcome.delayMs);
      let list = passes.get(outcome.event.key);
      if (list === undefined) passes.set(outcome.event.key, (list = []));
      list.push([outcome.passMs, outcome.event.cost]);
    } else {
      worstRetryAfterSeconds = Math.max(worstRetryAfterSeconds ?? 0, outcome.retryAfterSeconds ?? 0);
      worstRetryAfterMs = Math.max(worstRetryAfterMs ?? 0, outcome.retryAfterMs);
    }
  }
  let maxAdmittedInWindow = 0;
  for (const list of passes.values()) maxAdmittedInWindow = Math.max(maxAdmittedInWindow, slidingMax(list, windowMs));
  return {
    algorithm,
    offered: outcomes.length,
    admitted,
    refused: outcomes.length - admitted,
    maxAdmittedInWindow,
    worstRetryAfterSeconds,
    worstRetryAfterMs,
    worstDelayMs,
  };
}

/** See {@link slidingMax}. */
const TIME_TOLERANCE_MS = 1e-6;

/**
 * The largest sum of weights of points within any half-open interval
 * `[t, t + lengthMs)`. The best interval starts at a point, so a two-pointer
 * sweep over the points sorted by time finds it. A point less than a
 * nanosecond (1e-6 ms) before the interval's end counts as at its end: the
 * delay algorithm's pass times are sums of fractional intervals, and
 * 1000 + 998.9999999999998 means 1999.
 */
export function slidingMax(points: ReadonlyArray<readonly [number, number]>, lengthMs: number): number {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  let best = 0;
  let sum = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end]![0] < sorted[start]![0] + lengthMs - TIME_TOLERANCE_MS) sum += sorted[end++]![1];
    best = Math.max(best, sum);
    sum -= sorted[start]![1];
  }
  return best;
}
