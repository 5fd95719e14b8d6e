import type { ResolvedLimit } from '../limit.js';

/**
 * The state of one limit under one key: a short array of numbers, or
 * `undefined` for a key never seen (or whose state has expired, which every
 * algorithm treats the same way). Arrays of numbers keep the in-memory store
 * small and map one-to-one onto a Redis hash field or a PostgreSQL array.
 */
export type LimitState = readonly number[];

/**
 * The outcome of charging `cost` against one limit at `nowMs`, computed
 * without mutating anything. The policy decides afterwards which state to keep.
 *
 * "Tokens" are the units still available: for the bucket algorithms the
 * bucket's level, for the window algorithms `limit - used`.
 */
export interface Step {
  /** True when this limit alone would admit the cost. */
  readonly allowed: boolean;
  /** The state to store if the whole policy admits the request. */
  readonly next: LimitState;
  /**
   * The state to store if this limit refuses the request. `undefined` means
   * leave the stored state as it was, so a refusal charges nothing. When this
   * limit admits but another limit of the policy refuses, it is not used.
   */
  readonly nextIfRefused: LimitState | undefined;
  /** The capacity reported as `limit` (the burst for buckets, the quota for windows). */
  readonly capacity: number;
  /** Tokens available as last stored (before the time since then is credited). */
  readonly tokensBefore: number;
  /** Tokens credited for the time elapsed since the stored state. */
  readonly tokensRefilled: number;
  /** Tokens left after this step if it is admitted (before + refilled - cost). */
  readonly tokensAfter: number;
  /** Ms from now until the limit is back to full capacity, if admitted. */
  readonly resetMs: number;
  /** Ms from now until this cost could be admitted; 0 when allowed, `Infinity` when never. */
  readonly retryAfterMs: number;
  /** Ms from now until at least one more token is credited; 0 when already full. */
  readonly nextRefillMs: number;
  /** Delay mode: ms to hold the admitted request before serving it. 0 otherwise. */
  readonly delayMs: number;
}

/**
 * An algorithm: pure functions of (state, limit, cost, now). None of them
 * reads the clock or mutates its arguments.
 */
export interface Algorithm {
  /**
   * Charges `cost` (≥ 0; 0 is a peek). Does not mutate `state`.
   *
   * `into` is for the in-memory store's hot path: when given, the step
   * admits, and `into` has this algorithm's state length, the next state is
   * written into `into` and returned as `next` instead of a new array. It may
   * be `state` itself (every algorithm reads `state` before writing), which
   * updates a stored state in place; a refused step leaves it untouched.
   * The sliding log's length varies: it writes into `into` when `into` has
   * the length of its next state (the cost merged into the newest entry of
   * the same millisecond, or added after the entries still in the window).
   * A blocked state (odd length) is never written in place.
   */
  step(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number, into?: number[]): Step;
  /** Gives `cost` back, never beyond full capacity. Returns the new state. Does not mutate `state`. */
  refund(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number): LimitState | undefined;
  /**
   * Ms after `nowMs` at which `state` becomes equivalent to no state at all,
   * so a store may drop it (used for TTLs and pruning).
   */
  ttlMs(state: LimitState, limit: ResolvedLimit, nowMs: number): number;
}

/**
 * The `next` state of a step of a one-number state: written into `into` when
 * the step admits and `into` has that length (see {@link Algorithm.step}),
 * otherwise a new array. Three functions rather than one taking a list, so
 * the hot path allocates nothing.
 */
export function nextState1(into: number[] | undefined, allowed: boolean, a: number): LimitState {
  if (!allowed || into === undefined || into.length !== 1) return [a];
  into[0] = a;
  return into;
}

/** {@link nextState1} for a two-number state. */
export function nextState2(into: number[] | undefined, allowed: boolean, a: number, b: number): LimitState {
  if (!allowed || into === undefined || into.length !== 2) return [a, b];
  into[0] = a;
  into[1] = b;
  return into;
}

/** {@link nextState1} for a three-number state. */
export function nextState3(into: number[] | undefined, allowed: boolean, a: number, b: number, c: number): LimitState {
  if (!allowed || into === undefined || into.length !== 3) return [a, b, c];
  into[0] = a;
  into[1] = b;
  into[2] = c;
  return into;
}
