/**
 * @fastify/rate-limit's per-request options on ratekit mode's gate: `allowList` and a function
 * `max` (both act on the key before the decision), `continueExceeding` and `ban` (both act on a
 * refusal), and `createRateLimit()`'s manual check with its result shape. The gate does the rest
 * (the key, the decision, the header list); without these options the hook is the gate's
 * `decide` alone.
 *
 * @module
 */
import {
  bindingLimit,
  createLimiter,
  type Decision,
  type Gate,
  type GateDecided,
  type GateOutcome,
  type KeyResult,
  keyedHeaderList,
  type Limiter,
  type LimitOptions,
  RateKitError,
  RateKitOptionError,
  type RateLimitStore,
} from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import type { AllowListedResult, CheckOptions, LimitedResult } from './compat/types.js';
import { kMax, type Settings } from './ratekit-options.js';
import { type MaybePromise, then } from './compat/then.js';

/** What one limiter says about one request: the gate's outcome, and whether a refusal is a ban (403). */
export type Outcome = GateOutcome & { readonly banned?: boolean };

/** What the limiters of a registration share. */
export interface Shared {
  readonly store: RateLimitStore;
  readonly now: (() => number) | undefined;
  readonly onError: (error: RateKitError) => void;
  readonly refusalCache: boolean | { maxKeys?: number } | undefined;
}

/** The per-request steps of one limiter. */
export interface Steps {
  /** The hook's decision (counted). */
  readonly decide: (request: FastifyRequest) => MaybePromise<Outcome>;
  /** `createRateLimit()`'s check: counted, or a peek with `{ increment: false }`. @throws {RateKitOptionError} for a non-boolean `increment` */
  readonly check: (request: FastifyRequest, options?: CheckOptions) => Promise<AllowListedResult | LimitedResult>;
}

/**
 * Builds one limiter's steps on its gate.
 *
 * @param prefix - the gate's namespace in the store (the ban counter's is beside it)
 */
export function createSteps(gate: Gate<FastifyRequest>, settings: Settings, shared: Shared, prefix: string): Steps {
  const { allowSet, allowFn, maxFn, ban, continueExceeding } = settings;
  const limiter = gate.limiter;
  const call = (request: FastifyRequest) => (gate.needsContext ? { context: request } : undefined);
  const banLimiter = ban > 0 ? createBanLimiter(ban, settings, shared, `${prefix}:ban`) : undefined;
  const headersOf = continueExceeding && settings.headers !== undefined ? keyedHeaderList(settings.headers) : undefined;
  const keyed = allowSet !== undefined || allowFn !== undefined || maxFn !== undefined;

  /** The key's own steps before a decision: `allowList` (false: listed), then a function `max`. */
  function admit(request: FastifyRequest, raw: KeyResult): MaybePromise<string | false> {
    if (raw === false) return false;
    const key = String(raw);
    if (allowSet?.has(key)) return false;
    const listed = allowFn === undefined ? false : allowFn(request, key);
    return then(listed, (l) => (l ? false : then(maxFn === undefined ? 0 : maxFn(request, key), (max) => withMax(request, key, max))));
  }

  function withMax(request: FastifyRequest, key: string, max: number): string {
    if (maxFn === undefined) return key;
    if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) throw new RateKitOptionError('max(request, key)', 'to return an integer >= 1', max);
    (request as unknown as Record<symbol, number>)[kMax] = max;
    return key;
  }

  /** `continueExceeding` and `ban` on a counted refusal; anything else as the gate gave it. */
  function settle(request: FastifyRequest, outcome: GateOutcome): MaybePromise<Outcome> {
    if (outcome.key === undefined || outcome.decision.allowed || (ban < 0 && !continueExceeding)) return outcome;
    const { key, decision } = outcome;
    return then(continueExceeding ? restart(request, key, decision) : decision, (shown) =>
      then(isBanned(key, shown, true), (banned): Outcome => ({ key, decision: shown, headers: shown === decision ? outcome.headers : (headersOf?.(shown, key) ?? outcome.headers), banned })),
    );
  }

  /** Chosen once: without these options, the gate's `decide` alone (no closure, no Promise with a synchronous store). */
  const decide: Steps['decide'] = !keyed
    ? ban < 0 && !continueExceeding
      ? (request) => gate.decide(request, request.ip)
      : (request) => then(gate.decide(request, request.ip), (o) => settle(request, o))
    : (request) =>
        then(
          then(gate.key(request, request.ip), (raw) => admit(request, raw)),
          (key) => then(gate.decideFor(request, key), (o) => settle(request, o)),
        );

  /**
   * `continueExceeding`: starts the key again from an exhausted state (reset, then charge the
   * whole capacity), so the refusal lasts a full window from this attempt; returns the refusal as
   * it now stands.
   */
  function restart(request: FastifyRequest, key: string, refused: Decision): MaybePromise<Decision> {
    const context = call(request);
    return then(limiter.reset(key), () => then(limiter.consume(key, { ...context, cost: refused.limit }), () => then(limiter.peek(key, context), (d) => (d.allowed ? refused : d))));
  }

  function isBanned(key: string, refused: Decision, increment: boolean): MaybePromise<boolean> {
    if (ban < 0) return false;
    if (banLimiter === undefined) return true; // ban 0: the first refusal is a ban
    const windowMs = { context: bindingLimit(refused)?.windowMs ?? 60_000 };
    return then(increment ? banLimiter.consume(key, windowMs) : banLimiter.peek(key, windowMs), (d) => !d.allowed);
  }

  async function check(request: FastifyRequest, options?: CheckOptions): Promise<AllowListedResult | LimitedResult> {
    const increment = options?.increment ?? true;
    if (typeof increment !== 'boolean') throw new RateKitOptionError('increment', 'a boolean', increment);
    const raw = await gate.key(request, request.ip);
    const key = await admit(request, raw);
    if (key === false) return { isAllowed: true, key: raw === false ? '' : String(raw) };
    let decision: Decision;
    let banned = false;
    if (increment) {
      const outcome = (await settle(request, await gate.decideFor(request, key))) as Outcome & GateDecided;
      decision = outcome.decision;
      banned = outcome.banned === true;
    } else {
      decision = await limiter.peek(key, call(request));
      if (!decision.allowed) banned = await isBanned(key, decision, false);
    }
    return {
      isAllowed: false,
      key,
      max: decision.limit,
      timeWindow: bindingLimit(decision)?.windowMs ?? 0,
      remaining: decision.remaining,
      ttl: decision.resetMs,
      ttlInSeconds: Math.ceil(decision.resetMs / 1000),
      isExceeded: !decision.allowed,
      isBanned: banned,
      decision,
    };
  }

  return { decide, check };
}

/**
 * The ban counter: a fixed window of `ban` refusals per key, as long as the refusing limit's
 * window, in its own namespace of the same store. The refusal after `ban` refusals is a ban.
 */
function createBanLimiter(ban: number, settings: Settings, shared: Shared, prefix: string): Limiter<number> {
  const byWindow = new Map<number, LimitOptions>();
  const { onStoreError } = settings.gate;
  return createLimiter<number>({
    limits: (windowMs) => {
      let limit = byWindow.get(windowMs);
      if (limit === undefined) {
        limit = { algorithm: 'fixed-window', limit: ban, windowMs, name: 'ban' };
        byWindow.set(windowMs, limit);
      }
      return limit;
    },
    store: shared.store,
    prefix,
    now: shared.now,
    // A fallback limiter has other limits; for the ban count, failing open is the safe reading.
    onStoreError: typeof onStoreError === 'string' ? onStoreError : 'allow',
    storeTimeoutMs: settings.gate.storeTimeoutMs,
    onError: shared.onError,
    refusalCache: shared.refusalCache,
  });
}
