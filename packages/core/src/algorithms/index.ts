import type { AlgorithmName, ResolvedLimit } from '../limit.js';
import { delay } from './delay.js';
import { fixedWindow } from './fixed-window.js';
import { gcra } from './gcra.js';
import { slidingLog } from './sliding-log.js';
import { slidingWindow } from './sliding-window.js';
import { tokenBucket } from './token-bucket.js';
import type { Algorithm, LimitState, Step } from './types.js';

/** Every algorithm by name. Stores that evaluate in process look algorithms up here. */
export const algorithms: Readonly<Record<AlgorithmName, Algorithm>> = Object.freeze({
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
  'sliding-log': slidingLog,
  'token-bucket': tokenBucket,
  gcra,
  delay,
});

/**
 * The algorithm named `name`: what `algorithms[name]` gives, as a `switch`.
 * Where limits of several algorithms meet (a policy, or two limiters in one
 * process), `algorithms[name]` is a megamorphic keyed load, about 200
 * instructions per lookup (`bench/icount`); comparing interned strings is a
 * few.
 */
export function algorithmOf(name: AlgorithmName): Algorithm {
  switch (name) {
    case 'fixed-window':
      return fixedWindow;
    case 'gcra':
      return gcra;
    case 'token-bucket':
      return tokenBucket;
    case 'sliding-window':
      return slidingWindow;
    case 'delay':
      return delay;
    default:
      return slidingLog;
  }
}

/**
 * `algorithmOf(name).step(state, limit, cost, nowMs)`, with one call site
 * per algorithm: each stays monomorphic, so V8 can inline the steps a
 * process uses where limits of several algorithms meet (a policy). The
 * {@link Step}s are still allocated there on Node 20: the branches meet in
 * one value, which V8's escape analysis does not remove (bench/notes/instruction-counts.md). `into` as in {@link Algorithm.step}.
 */
export function stepOf(name: AlgorithmName, state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number, into?: number[]): Step {
  switch (name) {
    case 'fixed-window':
      return fixedWindow.step(state, limit, cost, nowMs, into);
    case 'gcra':
      return gcra.step(state, limit, cost, nowMs, into);
    case 'token-bucket':
      return tokenBucket.step(state, limit, cost, nowMs, into);
    case 'sliding-window':
      return slidingWindow.step(state, limit, cost, nowMs, into);
    case 'delay':
      return delay.step(state, limit, cost, nowMs, into);
    default:
      return slidingLog.step(state, limit, cost, nowMs, into);
  }
}

export type { Algorithm, LimitState, Step } from './types.js';
