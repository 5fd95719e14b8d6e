import type { Step } from './algorithms/types.js';
import { EPSILON, wholeTokens } from './algorithms/tolerance.js';
import type { AlgorithmName, ResolvedLimit } from './limit.js';

/**
 * What one limit of a policy said about a request. All durations are ms
 * from the decision's `nowMs`; token counts may be fractional.
 */
export interface LimitDecision {
  /** The limit's policy name. */
  readonly name: string;
  readonly algorithm: AlgorithmName;
  /** True when this limit alone would have admitted the request. */
  readonly allowed: boolean;
  /** The capacity: the quota for windows, the burst for buckets. */
  readonly limit: number;
  /** The quota per window (`limit` option), for `RateLimit-Policy`. */
  readonly quota: number;
  readonly windowMs: number;
  /** Whole tokens left after this decision, never negative. */
  readonly remaining: number;
  /** Tokens as last stored under the key, before crediting elapsed time. */
  readonly tokensBefore: number;
  /** Tokens credited for the time elapsed since then. */
  readonly tokensRefilled: number;
  /** Tokens charged by this decision: the cost, or 0 when the policy refused or peeked. */
  readonly tokensPaid: number;
  /** `tokensBefore + tokensRefilled − tokensPaid`. */
  readonly tokensAfter: number;
  /** Ms until this limit is back to full capacity. */
  readonly resetMs: number;
  /** Ms until this limit would admit the same cost: 0 when it admits now, `Infinity` when never. */
  readonly retryAfterMs: number;
  /** Ms until the next token is credited; 0 when full. */
  readonly nextRefillMs: number;
  /**
   * Ms until this limit's block ends (`blockDurationMs`, see `policy.ts`),
   * in the state the decision leaves: set when the limit is blocked (it
   * refused, and refuses every request until then), absent otherwise. Core's
   * stores (memory, Redis, PostgreSQL, Memcached) report it; the refusal
   * cache keeps a blocked refusal only when it is given, and no longer than it.
   */
  readonly blockedMs?: number;
}

/**
 * The answer to "may this request pass?". A refusal is a value with
 * `allowed: false`, never an exception.
 *
 * The top-level `limit`, `remaining` and `resetMs` come from the binding
 * limit: the one that refused with the longest `retryAfterMs`, or, when all
 * admitted, the one with the fewest tokens left.
 *
 * @example
 * ```ts
 * const d = limiter.consume('203.0.113.7');
 * if (!d.allowed) console.log(`retry in ${d.retryAfterMs} ms`);
 * ```
 */
export interface Decision {
  readonly allowed: boolean;
  /** The binding limit's capacity. */
  readonly limit: number;
  /** Whole tokens left on the binding limit. */
  readonly remaining: number;
  /** Ms until the binding limit is back to full capacity. */
  readonly resetMs: number;
  /** Ms until the same request could pass: 0 when allowed, `Infinity` when the cost can never pass. */
  readonly retryAfterMs: number;
  /** Delay mode: ms the caller should hold the admitted request. 0 otherwise. */
  readonly delayMs: number;
  /** The cost that was asked for. */
  readonly cost: number;
  /** The clock reading the decision was made at, Unix epoch ms (the server's clock for remote stores). */
  readonly nowMs: number;
  /** The name of the binding limit. */
  readonly policy: string;
  /** One entry per limit, in the order of the policy. */
  readonly limits: readonly LimitDecision[];
  /**
   * Where the decision came from when not from the store: `'cache'` for a
   * refusal a limiter answered from its refusal cache without calling the
   * store (the `refusalCache` option of `createLimiter`; Upstash's
   * `reason: 'cacheBlock'`): the store's refusal of the same request, its
   * durations shortened by the time since. Absent when the store (or
   * `onStoreError`) decided.
   */
  readonly source?: 'cache';
}

/**
 * Builds a {@link Decision} from the steps of each limit. `charged` steps are
 * the steps at the requested cost; `uncharged` steps, used when the policy
 * refused or peeked, are the same limits at cost 0 so that the reported
 * tokens show that nothing was paid. For stores: the Redis and PostgreSQL
 * stores compute the steps server-side and hand them here.
 */
export function buildDecision(input: { limits: readonly ResolvedLimit[]; charged: readonly Step[]; uncharged: readonly Step[] | undefined; allowed: boolean; cost: number; nowMs: number }): Decision {
  const { limits, charged, uncharged, allowed, cost, nowMs } = input;
  if (limits.length === 1) return decideOne(limits[0]!, charged[0]!, uncharged?.[0], allowed, cost, nowMs);
  const entries = new Array<LimitDecision>(limits.length);
  let delayMs = 0;
  for (let i = 0; i < limits.length; i++) {
    const step = charged[i]!;
    entries[i] = limitDecision(limits[i]!, step, uncharged?.[i], cost);
    if (allowed && step.delayMs > delayMs) delayMs = step.delayMs;
  }
  return decisionOf(entries, allowed, delayMs, cost, nowMs);
}

/**
 * A policy's {@link Decision} from its limits' entries (see
 * {@link limitDecision}): the top-level figures are the binding limit's.
 * `delayMs` is the longest delay of the limits when allowed, else 0.
 */
export function decisionOf(entries: readonly LimitDecision[], allowed: boolean, delayMs: number, cost: number, nowMs: number): Decision {
  let binding = 0;
  for (let i = 1; i < entries.length; i++) if (binds(entries[i]!, entries[binding]!, allowed)) binding = i;
  return topLevel(entries[binding]!, entries, allowed, delayMs, cost, nowMs);
}

/**
 * The decision of a one-limit policy: {@link buildDecision} without the
 * arrays, because this is the hot path of every in-memory decision.
 * `uncharged` is the step at cost 0, given when the policy refused or peeked.
 */
export function decideOne(limit: ResolvedLimit, step: Step, uncharged: Step | undefined, allowed: boolean, cost: number, nowMs: number): Decision {
  // The same objects as limitDecision and topLevel, written out in one function
  // so that V8 inlines it whole into the store's hot path.
  const shown = uncharged ?? step;
  const remaining = Math.max(0, Math.floor(shown.tokensAfter + EPSILON));
  const resetMs = shown.resetMs;
  const entry: LimitDecision = {
    name: limit.name,
    algorithm: limit.algorithm,
    allowed: step.allowed,
    limit: step.capacity,
    quota: limit.limit,
    windowMs: limit.windowMs,
    remaining,
    tokensBefore: shown.tokensBefore,
    tokensRefilled: shown.tokensRefilled,
    tokensPaid: uncharged === undefined ? cost : 0,
    tokensAfter: shown.tokensAfter,
    resetMs,
    retryAfterMs: step.retryAfterMs,
    nextRefillMs: shown.nextRefillMs,
  };
  return {
    allowed,
    limit: step.capacity,
    remaining,
    resetMs,
    retryAfterMs: allowed ? 0 : step.retryAfterMs,
    delayMs: allowed ? step.delayMs : 0,
    cost,
    nowMs,
    policy: limit.name,
    limits: [entry],
  };
}

/** One limit's entry. `uncharged`, when given, supplies the token figures (nothing was paid). */
export function limitDecision(limit: ResolvedLimit, step: Step, uncharged: Step | undefined, cost: number): LimitDecision {
  const shown = uncharged ?? step;
  return {
    name: limit.name,
    algorithm: limit.algorithm,
    allowed: step.allowed,
    limit: step.capacity,
    quota: limit.limit,
    windowMs: limit.windowMs,
    remaining: wholeTokens(shown.tokensAfter),
    tokensBefore: shown.tokensBefore,
    tokensRefilled: shown.tokensRefilled,
    tokensPaid: uncharged === undefined ? cost : 0,
    tokensAfter: shown.tokensAfter,
    resetMs: shown.resetMs,
    retryAfterMs: step.retryAfterMs,
    nextRefillMs: shown.nextRefillMs,
  };
}

function topLevel(top: LimitDecision, entries: readonly LimitDecision[], allowed: boolean, delayMs: number, cost: number, nowMs: number): Decision {
  return {
    allowed,
    limit: top.limit,
    remaining: top.remaining,
    resetMs: top.resetMs,
    retryAfterMs: allowed ? 0 : top.retryAfterMs,
    delayMs,
    cost,
    nowMs,
    policy: top.name,
    limits: entries,
  };
}

/** True when `candidate` should replace `current` as the binding limit. */
function binds(candidate: LimitDecision, current: LimitDecision, allowed: boolean): boolean {
  if (!allowed) return candidate.retryAfterMs > current.retryAfterMs;
  if (candidate.remaining !== current.remaining) return candidate.remaining < current.remaining;
  return candidate.resetMs > current.resetMs;
}
