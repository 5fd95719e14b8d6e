import type { ResolvedLimit } from '../limit.js';
import { snapToWhole, tatSlackMs } from './tolerance.js';
import type { LimitState } from './types.js';

/**
 * The arithmetic GCRA and delay mode share: both keep one theoretical
 * arrival time (TAT) and differ only in what they do with it (refuse beyond
 * the burst, or delay up to `maxDelayMs`). Pure; does not mutate `state`.
 */
export interface TatAdvance {
  /** The emission interval `T = windowMs / limit`, in ms. */
  readonly T: number;
  /** The tolerance `τ = burst × T`, in ms. */
  readonly tau: number;
  /** The TAT before this request, never earlier than now. */
  readonly tat: number;
  /** The TAT after charging `cost`: `tat + cost × T`. */
  readonly newTat: number;
  /** Float slack for comparisons with `newTat` (see {@link tatSlackMs}). */
  readonly slack: number;
  /** Tokens available at now: `burst − (tat − now) / T`, snapped to a whole number within the slack. */
  readonly tokens: number;
}

/** Advances a TAT state by `cost` at `nowMs`. An absent state is a full bucket (TAT = now). */
export function advanceTat(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number): TatAdvance {
  const T = limit.emissionIntervalMs;
  const tat = Math.max(state === undefined ? nowMs : state[0]!, nowMs);
  const newTat = tat + cost * T;
  // The TAT is an absolute time, so its float rounding grows with the clock: see tatSlackMs.
  const slack = tatSlackMs(newTat, nowMs, T);
  return { T, tau: limit.burst * T, tat, newTat, slack, tokens: snapToWhole(limit.burst - (tat - nowMs) / T, slack / T) };
}

/** Gives `cost` back to a TAT state; a TAT at or before now is a full bucket, so it is dropped. */
export function refundTat(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number): LimitState | undefined {
  if (state === undefined) return undefined;
  const tat = state[0]! - cost * limit.emissionIntervalMs;
  return tat <= nowMs ? undefined : [tat];
}
