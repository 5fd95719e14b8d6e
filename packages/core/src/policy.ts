import { algorithms } from './algorithms/index.js';
import type { LimitState, Step } from './algorithms/types.js';
import { buildDecision, type Decision, decideOne } from './decision.js';
import type { ResolvedLimit } from './limit.js';

/** What a store is asked to do with a key's limits. */
export type EvaluateMode = 'consume' | 'peek' | 'refund';

/** The result of {@link evaluatePolicy}: the decision and the states to write back. */
export interface PolicyOutcome {
  readonly decision: Decision;
  /**
   * For each limit, the state to store: a state, `undefined` to delete it, or
   * {@link UNCHANGED} to leave the stored state alone.
   */
  readonly writes: ReadonlyArray<LimitState | undefined | typeof UNCHANGED>;
}

/** Marks a limit whose stored state must be left as it is. */
export const UNCHANGED: unique symbol = Symbol('ratekit.unchanged');

/**
 * Decides one request against every limit of a policy, all-or-nothing: the
 * request is admitted only if every limit admits it, and if any limit refuses,
 * no limit is charged. Pure: reads `states`, returns what to write, mutates
 * nothing, reads no clock. In-process stores call it directly; remote stores
 * run the same logic server-side in one atomic script or statement.
 *
 * - `consume`: charge `cost` to every limit if all admit.
 * - `peek`: decide as `consume` would, write nothing.
 * - `refund`: give `cost` back to every limit (never beyond full), then report as `peek` at cost 0.
 */
export function evaluatePolicy(
  states: ReadonlyArray<LimitState | undefined>,
  limits: readonly ResolvedLimit[],
  cost: number,
  mode: EvaluateMode,
  nowMs: number,
): PolicyOutcome {
  if (mode === 'refund') return refundPolicy(states, limits, cost, nowMs);
  if (limits.length === 1) {
    const { decision, write } = evaluateLimit(states[0], limits[0]!, cost, mode, nowMs);
    return { decision, writes: [write] };
  }
  const n = limits.length;
  const charged = new Array<Step>(n);
  let allowed = true;
  for (let i = 0; i < n; i++) {
    const limit = limits[i]!;
    const step = algorithms[limit.algorithm].step(states[i], limit, cost, nowMs);
    charged[i] = step;
    if (!step.allowed) allowed = false;
  }
  let uncharged: Step[] | undefined;
  if (!allowed || mode === 'peek') {
    uncharged = new Array<Step>(n);
    for (let i = 0; i < n; i++) uncharged[i] = algorithms[limits[i]!.algorithm].step(states[i], limits[i]!, 0, nowMs);
  }
  const writes = new Array<LimitState | undefined | typeof UNCHANGED>(n);
  for (let i = 0; i < n; i++) writes[i] = writeFor(charged[i]!, allowed, mode);
  return { decision: buildDecision({ limits, charged, uncharged, allowed, cost, nowMs }), writes };
}

/** The outcome of {@link evaluateLimit}: the decision and the one state to write back. */
export interface LimitOutcome {
  readonly decision: Decision;
  /** The state to store: a state, `undefined` to delete it, or {@link UNCHANGED}. */
  readonly write: LimitState | undefined | typeof UNCHANGED;
}

/**
 * {@link evaluatePolicy} for a one-limit policy, the common case, without the
 * per-limit arrays: in-process stores call it on their hot path. Pure, like
 * `evaluatePolicy`. `refund` mode is not handled here.
 */
export function evaluateLimit(state: LimitState | undefined, limit: ResolvedLimit, cost: number, mode: 'consume' | 'peek', nowMs: number): LimitOutcome {
  const algorithm = algorithms[limit.algorithm];
  const step = algorithm.step(state, limit, cost, nowMs);
  const allowed = step.allowed;
  const uncharged = allowed && mode === 'consume' ? undefined : algorithm.step(state, limit, 0, nowMs);
  return { decision: decideOne(limit, step, uncharged, allowed, cost, nowMs), write: writeFor(step, allowed, mode) };
}

/** The state to write for one limit's step, given the policy's verdict. */
function writeFor(step: Step, allowed: boolean, mode: EvaluateMode): LimitState | undefined | typeof UNCHANGED {
  if (mode === 'peek') return UNCHANGED;
  if (allowed) return step.next;
  // Only a limit that itself refused may record a penalty; the others were never charged.
  return step.allowed || step.nextIfRefused === undefined ? UNCHANGED : step.nextIfRefused;
}

function refundPolicy(
  states: ReadonlyArray<LimitState | undefined>,
  limits: readonly ResolvedLimit[],
  cost: number,
  nowMs: number,
): PolicyOutcome {
  const refunded = limits.map((limit, i) => algorithms[limit.algorithm].refund(states[i], limit, cost, nowMs));
  const steps = limits.map((limit, i) => algorithms[limit.algorithm].step(refunded[i], limit, 0, nowMs));
  return { decision: buildDecision({ limits, charged: steps, uncharged: steps, allowed: true, cost: 0, nowMs }), writes: refunded };
}
