import { algorithmOf, stepOf } from './algorithms/index.js';
import { blockedUntil, hasBlock, withBlock, withoutBlock } from './algorithms/block.js';
import type { LimitState, Step } from './algorithms/types.js';
import { buildDecision, type Decision, decideOne, decisionOf, type LimitDecision, limitDecision } from './decision.js';
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
 * - `consume`: charge `cost` to every limit if all admit. A limit that itself
 *   refuses may record a penalty: a delay limit's `refusedPenaltyCapMs`, and
 *   a block (`blockDurationMs`) for any algorithm. No other limit is charged.
 *   A refusal reports the state it leaves, penalty and block included (what
 *   a peek right after it reports).
 * - `peek`: decide as `consume` would, write nothing (and so block nothing).
 * - `refund`: give `cost` back to every limit (never beyond full), then report
 *   as `peek` at cost 0. A block stays.
 *
 * A limit with `blockDurationMs` whose state carries a block that has not
 * ended refuses whatever its algorithm says, charges nothing and writes
 * nothing (see {@link stepLimit}). The entry of a limit blocked in the state
 * the decision leaves (a block it has just recorded, or one that has not
 * ended) carries `blockedMs`, the time left in the block.
 */
export function evaluatePolicy(states: ReadonlyArray<LimitState | undefined>, limits: readonly ResolvedLimit[], cost: number, mode: EvaluateMode, nowMs: number): PolicyOutcome {
  if (mode === 'refund') return refundPolicy(states, limits, cost, nowMs);
  if (limits.length === 1) {
    const { decision, write } = evaluateLimit(states[0], limits[0]!, cost, mode, nowMs);
    return { decision, writes: [write] };
  }
  if (mode === 'consume') {
    const admitted = admitAll(states, limits, cost, nowMs);
    if (admitted !== undefined) return admitted;
  }
  const n = limits.length;
  const charged = new Array<Step>(n);
  let allowed = true;
  for (let i = 0; i < n; i++) {
    const step = stepLimit(states[i], limits[i]!, cost, nowMs);
    charged[i] = step;
    if (!step.allowed) allowed = false;
  }
  const writes = new Array<LimitState | undefined | typeof UNCHANGED>(n);
  let uncharged: Step[] | undefined;
  if (!allowed || mode === 'peek') {
    uncharged = new Array<Step>(n);
    for (let i = 0; i < n; i++) {
      const limit = limits[i]!;
      const zero = stepLimit(states[i], limit, 0, nowMs);
      const write = mode === 'peek' ? UNCHANGED : allowed ? charged[i]!.next : refusalWrite(states[i], limit, charged[i]!, zero, nowMs);
      writes[i] = write;
      if (write === UNCHANGED || allowed) uncharged[i] = zero;
      else {
        // Report the state the refusal leaves: its penalty, its block.
        uncharged[i] = stepLimit(write, limit, 0, nowMs);
        charged[i] = blockedRetry(charged[i]!, limit);
      }
    }
  } else {
    for (let i = 0; i < n; i++) writes[i] = charged[i]!.next;
  }
  const decision = buildDecision({ limits, charged, uncharged, allowed, cost, nowMs });
  // A blocked limit refuses: an admission carries no block.
  return { decision: allowed ? decision : withBlocks(decision, limits, states, writes, nowMs), writes };
}

/**
 * {@link evaluatePolicy}'s common case, a consume that every limit admits:
 * each limit's step is reported as soon as it is computed, with no arrays
 * of steps and no second pass at cost 0. (The steps themselves are still
 * allocated: V8 does not inline two of them here within its budget.)
 * Undefined, at the first limit that refuses, for the general path to decide.
 */
function admitAll(states: ReadonlyArray<LimitState | undefined>, limits: readonly ResolvedLimit[], cost: number, nowMs: number): PolicyOutcome | undefined {
  const n = limits.length;
  const entries = new Array<LimitDecision>(n);
  const writes = new Array<LimitState>(n);
  let delayMs = 0;
  for (let i = 0; i < n; i++) {
    const limit = limits[i]!;
    const step = stepLimit(states[i], limit, cost, nowMs);
    if (!step.allowed) return undefined;
    entries[i] = limitDecision(limit, step, undefined, cost);
    writes[i] = step.next;
    if (step.delayMs > delayMs) delayMs = step.delayMs;
  }
  return { decision: decisionOf(entries, true, delayMs, cost, nowMs), writes };
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
  const step = stepLimit(state, limit, cost, nowMs);
  if (step.allowed) {
    if (mode === 'consume') return { decision: decideOne(limit, step, undefined, true, cost, nowMs), write: step.next };
    return { decision: decideOne(limit, step, stepLimit(state, limit, 0, nowMs), true, cost, nowMs), write: UNCHANGED };
  }
  const zero = stepLimit(state, limit, 0, nowMs);
  const write = mode === 'consume' ? refusalWrite(state, limit, step, zero, nowMs) : UNCHANGED;
  if (write === UNCHANGED) {
    const decision = decideOne(limit, step, zero, false, cost, nowMs);
    return { decision: limit.blockDurationMs === 0 ? decision : withBlocks(decision, [limit], [state], [write], nowMs), write };
  }
  // Report the state the refusal leaves: its penalty, its block.
  const decision = decideOne(limit, blockedRetry(step, limit), stepLimit(write, limit, 0, nowMs), false, cost, nowMs);
  return { decision: limit.blockDurationMs === 0 ? decision : withBlocks(decision, [limit], [state], [write], nowMs), write };
}

/**
 * Sets `blockedMs` on the entries of `decision` (just built, not yet shared)
 * whose limit is blocked at `nowMs` in the state the decision leaves (its
 * write, or the state read when it writes nothing): the time left in the
 * block, `blockedUntilMs − nowMs`. A limit without `blockDurationMs` ignores
 * a block, so it is never blocked. Only refusals and refunds can leave a
 * block (a blocked limit refuses), so the admissions' hot path never calls it.
 */
function withBlocks(
  decision: Decision,
  limits: readonly ResolvedLimit[],
  states: ReadonlyArray<LimitState | undefined>,
  writes: ReadonlyArray<LimitState | undefined | typeof UNCHANGED>,
  nowMs: number,
): Decision {
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    if (limit.blockDurationMs === 0) continue;
    const write = writes[i];
    const untilMs = blockedUntil(write === UNCHANGED ? states[i] : write, limit.algorithm);
    if (untilMs !== undefined && untilMs > nowMs) (decision.limits[i] as { blockedMs?: number }).blockedMs = untilMs - nowMs;
  }
  return decision;
}

/**
 * One limit's {@link Step}, honouring a block: what the limit's algorithm
 * says, unless the limit has `blockDurationMs` and `state` carries a block
 * that has not ended (`blockedUntilMs > nowMs`). Then the step refuses, leaves
 * the state as it is (`nextIfRefused` undefined) and reports the key as empty
 * until the block ends: no tokens, and `retryAfterMs`, `resetMs` and
 * `nextRefillMs` of at least the time left in the block (`retryAfterMs` stays
 * `Infinity` for a cost the limit can never admit). A block that has ended
 * is ignored (the next write drops it). Pure; does not mutate `state`.
 */
export function stepLimit(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number): Step {
  if (limit.blockDurationMs === 0 || state === undefined || !hasBlock(state, limit.algorithm)) return stepOf(limit.algorithm, state, limit, cost, nowMs);
  const untilMs = state[state.length - 1]!;
  const step = stepOf(limit.algorithm, withoutBlock(state, limit.algorithm), limit, cost, nowMs);
  if (untilMs <= nowMs) return step;
  const leftMs = untilMs - nowMs;
  return {
    allowed: false,
    next: step.next,
    nextIfRefused: undefined,
    capacity: step.capacity,
    tokensBefore: 0,
    tokensRefilled: 0,
    tokensAfter: -cost,
    resetMs: Math.max(leftMs, step.resetMs),
    retryAfterMs: step.retryAfterMs === Infinity ? Infinity : Math.max(leftMs, step.retryAfterMs),
    nextRefillMs: Math.max(leftMs, step.nextRefillMs),
    delayMs: 0,
  };
}

/** True when `state` carries a block that `limit` honours and that has not ended at `nowMs`. */
export function isBlocked(state: LimitState | undefined, limit: ResolvedLimit, nowMs: number): boolean {
  if (limit.blockDurationMs === 0) return false;
  const untilMs = blockedUntil(state, limit.algorithm);
  return untilMs !== undefined && untilMs > nowMs;
}

/**
 * What a limit that refused a consume stores: with `blockDurationMs`, its
 * state (penalty included) blocked until `nowMs + blockDurationMs`, unless
 * it is blocked already (a refusal during a block changes nothing);
 * otherwise the algorithm's penalty (`nextIfRefused`), or nothing.
 * `zero` is the limit's step at cost 0, whose `next` is the stored state
 * brought to `nowMs` (also when nothing was stored).
 */
function refusalWrite(state: LimitState | undefined, limit: ResolvedLimit, step: Step, zero: Step, nowMs: number): LimitState | typeof UNCHANGED {
  // Only a limit that itself refused may record a penalty; the others were never charged.
  if (step.allowed) return UNCHANGED;
  if (limit.blockDurationMs === 0) return step.nextIfRefused ?? UNCHANGED;
  if (isBlocked(state, limit, nowMs)) return UNCHANGED;
  return withBlock(step.nextIfRefused ?? zero.next, nowMs + limit.blockDurationMs);
}

/** The refusing step of a limit that has just been blocked: it may retry once the block and the algorithm both allow it. */
function blockedRetry(step: Step, limit: ResolvedLimit): Step {
  if (limit.blockDurationMs === 0 || step.retryAfterMs >= limit.blockDurationMs) return step;
  return { ...step, retryAfterMs: limit.blockDurationMs };
}

function refundPolicy(states: ReadonlyArray<LimitState | undefined>, limits: readonly ResolvedLimit[], cost: number, nowMs: number): PolicyOutcome {
  const refunded = limits.map((limit, i) => refundLimit(states[i], limit, cost, nowMs));
  const steps = limits.map((limit, i) => stepLimit(refunded[i], limit, 0, nowMs));
  const decision = buildDecision({ limits, charged: steps, uncharged: steps, allowed: true, cost: 0, nowMs });
  // A refund keeps a block that has not ended.
  return { decision: withBlocks(decision, limits, states, refunded, nowMs), writes: refunded };
}

/**
 * One limit's `refund` (what {@link evaluatePolicy} writes in `refund` mode):
 * the algorithm's refund of the state, keeping a block that has not ended
 * (only `resetKey` lifts a block). Pure; does not mutate `state`.
 */
export function refundLimit(state: LimitState | undefined, limit: ResolvedLimit, cost: number, nowMs: number): LimitState | undefined {
  const algorithm = algorithmOf(limit.algorithm);
  const untilMs = blockedUntil(state, limit.algorithm);
  if (untilMs === undefined) return algorithm.refund(state, limit, cost, nowMs);
  const refunded = algorithm.refund(withoutBlock(state!, limit.algorithm), limit, cost, nowMs);
  if (untilMs <= nowMs) return refunded;
  return withBlock(refunded ?? algorithm.step(undefined, limit, 0, nowMs).next, untilMs);
}
