import type { AlgorithmName } from '../limit.js';
import type { LimitState } from './types.js';

/**
 * Blocks (`blockDurationMs`) live in the state of the limit that refused, as
 * one extra number after the algorithm's own: `[...state, blockedUntilMs]`.
 * The layout tells them apart by length, so any limit can read any state:
 * the algorithms' states have a fixed length (GCRA and delay 1, fixed window
 * and token bucket 2, sliding window 3) or, for the sliding log, an even one
 * (time, cost pairs). A state one longer (an odd sliding log) carries a block.
 * Pure functions; none mutates its arguments.
 */

/** The length of each algorithm's state without a block (the sliding log: any even length). */
const BASE_LENGTH: Readonly<Record<AlgorithmName, number>> = {
  gcra: 1,
  delay: 1,
  'fixed-window': 2,
  'token-bucket': 2,
  'sliding-window': 3,
  'sliding-log': 0,
};

/** True when `state` carries a block (see above). */
export function hasBlock(state: LimitState, algorithm: AlgorithmName): boolean {
  return algorithm === 'sliding-log' ? (state.length & 1) === 1 : state.length > BASE_LENGTH[algorithm];
}

/** The blocked-until time (Unix epoch ms) `state` carries, or undefined. A time at or before now is a block that has ended. */
export function blockedUntil(state: LimitState | undefined, algorithm: AlgorithmName): number | undefined {
  return state !== undefined && hasBlock(state, algorithm) ? state[state.length - 1] : undefined;
}

/** `state` without its block (itself when it has none). */
export function withoutBlock(state: LimitState, algorithm: AlgorithmName): LimitState {
  return hasBlock(state, algorithm) ? state.slice(0, -1) : state;
}

/** `state` (which carries no block) blocked until `untilMs`. */
export function withBlock(state: LimitState, untilMs: number): LimitState {
  const blocked = new Array<number>(state.length + 1);
  for (let i = 0; i < state.length; i++) blocked[i] = state[i]!;
  blocked[state.length] = untilMs;
  return blocked;
}

/** An algorithm's `ttlMs` of `state`, kept at least until its block ends. */
export function ttlWithBlock(state: LimitState, algorithm: AlgorithmName, ttlMs: number, nowMs: number): number {
  return hasBlock(state, algorithm) ? Math.max(ttlMs, state[state.length - 1]! - nowMs) : ttlMs;
}
