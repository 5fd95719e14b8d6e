import { bindingLimit, consumeInAnyForm, createLimiter, type Decision, type Limiter, type LimitOptions, RateKitError, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import { keyError, usableKey } from './key.js';
import type { LimitContext, Settings } from './options.js';
import { isThenable, type MaybePromise, then } from './then.js';

/** What one limiter says about one request. */
export type Outcome =
  /** The default key found no IP: let through unlimited (reported once). */
  | { readonly kind: 'unkeyed' }
  /** The key is on the allow list: nothing counted, no headers. */
  | { readonly kind: 'allowListed'; readonly key: string }
  | { readonly kind: 'allowed'; readonly key: string; readonly decision: Decision }
  | { readonly kind: 'refused'; readonly key: string; readonly decision: Decision; readonly banned: boolean };

/**
 * Decides one request: key → allow list → `max` → core limiter → (on a
 * refusal) `continueExceeding` and `ban`. `increment: false` peeks, charging
 * nothing. Returns synchronously when every step does (the in-memory store,
 * synchronous user functions); throws (or rejects) on a key, `max` or store
 * error.
 */
export type Check = (request: FastifyRequest, increment: boolean) => MaybePromise<Outcome>;

/** What a check shares with its registration. */
export interface CheckEnvironment {
  readonly store: RateLimitStore;
  /** The namespace of this limiter's counts in the store. */
  readonly namespace: string;
  readonly now: (() => number) | undefined;
  /** core's `refusalCache` option (undefined: core's default). */
  readonly refusalCache?: boolean | { maxKeys?: number };
  readonly onError: (error: RateKitError) => void;
}

const UNKEYED: Outcome = Object.freeze({ kind: 'unkeyed' });

/**
 * Builds the check of one limiter. The limiter and the ban counter are core
 * limiters on the registration's store; this file only sequences them.
 *
 * @throws {RateKitOptionError} when core rejects the limiter's options
 */
export function createCheck(settings: Settings, env: CheckEnvironment): Check {
  const { keyOf, customKey, allowSet, allowFn, maxFn, needsContext, ban, continueExceeding } = settings;
  const limiter: Limiter<LimitContext> = createLimiter<LimitContext>({
    limits: settings.limits,
    cost: settings.cost,
    store: env.store,
    prefix: env.namespace,
    now: env.now,
    onStoreError: settings.onStoreError,
    storeTimeoutMs: settings.storeTimeoutMs,
    onError: env.onError,
    refusalCache: env.refusalCache,
  });
  // A cached refusal comes back as a value, not a Promise: no closure, no microtask.
  const consume = consumeInAnyForm(limiter);
  const banLimiter = ban > 0 ? createBanLimiter(ban, settings, env) : undefined;

  function check(request: FastifyRequest, increment: boolean): MaybePromise<Outcome> {
    let key: unknown;
    try {
      key = keyOf(request);
    } catch (error) {
      throw keyError({ threw: error });
    }
    if (isThenable(key)) {
      return Promise.resolve(key).then(
        (k) => afterKey(request, k, increment),
        (error: unknown) => {
          throw keyError({ threw: error });
        },
      );
    }
    return afterKey(request, key, increment);
  }

  function afterKey(request: FastifyRequest, raw: unknown, increment: boolean): MaybePromise<Outcome> {
    const key = usableKey(raw);
    if (key === undefined) {
      if (customKey || raw !== undefined) throw keyError({ returned: raw });
      return UNKEYED;
    }
    if (allowSet?.has(key)) return { kind: 'allowListed', key };
    if (allowFn === undefined) return limit(request, key, increment);
    return then(allowFn(request, key), (listed) => (listed ? { kind: 'allowListed', key } : limit(request, key, increment)));
  }

  function limit(request: FastifyRequest, key: string, increment: boolean): MaybePromise<Outcome> {
    if (maxFn === undefined) return decide(request, key, increment, 0);
    return then(maxFn(request, key), (max) => {
      if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) throw new RateKitOptionError('max(request, key)', 'to return an integer >= 1', max);
      return decide(request, key, increment, max);
    });
  }

  function decide(request: FastifyRequest, key: string, increment: boolean, max: number): MaybePromise<Outcome> {
    const call = needsContext ? { context: { request, max } } : undefined;
    const decision = increment ? consume(key, call) : limiter.peek(key, call);
    // No closure on the synchronous (in-memory) path.
    if (isThenable(decision)) return decision.then((d) => settle(key, d, increment, call));
    return settle(key, decision, increment, call);
  }

  function settle(key: string, decision: Decision, increment: boolean, call: { context: LimitContext } | undefined): MaybePromise<Outcome> {
    if (decision.allowed) return { kind: 'allowed', key, decision };
    // Without `continueExceeding` and `ban` (the defaults), a refusal is the decision as it stands: no closures.
    if (ban < 0 && !(continueExceeding && increment)) return { kind: 'refused', key, decision, banned: false };
    const shown = continueExceeding && increment ? restart(key, decision, call) : decision;
    return then(shown, (s) => then(isBanned(key, s, increment), (banned): Outcome => ({ kind: 'refused', key, decision: s, banned })));
  }

  /**
   * `continueExceeding`: starts the key again from an exhausted state (reset,
   * then charge the whole capacity), so the refusal lasts a full window from
   * this attempt; returns the refusal as it now stands.
   */
  function restart(key: string, refused: Decision, call: { context: LimitContext } | undefined): MaybePromise<Decision> {
    return then(limiter.reset(key), () => then(limiter.consume(key, { ...call, cost: refused.limit }), () => then(limiter.peek(key, call), (d) => (d.allowed ? refused : d))));
  }

  function isBanned(key: string, refused: Decision, increment: boolean): MaybePromise<boolean> {
    if (ban < 0) return false;
    if (banLimiter === undefined) return true; // ban 0: the first refusal is a ban
    const call = { context: bindingLimit(refused)?.windowMs ?? 60_000 };
    return then(increment ? banLimiter.consume(key, call) : banLimiter.peek(key, call), (d) => !d.allowed);
  }

  return check;
}

/**
 * The ban counter: a fixed window of `ban` refusals per key, as long as the
 * refusing limit's window, in its own namespace of the same store. The
 * refusal after `ban` refusals is a ban.
 */
function createBanLimiter(ban: number, settings: Settings, env: CheckEnvironment): Limiter<number> {
  const byWindow = new Map<number, LimitOptions>();
  return createLimiter<number>({
    limits: (windowMs) => {
      let limit = byWindow.get(windowMs);
      if (limit === undefined) {
        limit = { algorithm: 'fixed-window', limit: ban, windowMs, name: 'ban' };
        byWindow.set(windowMs, limit);
      }
      return limit;
    },
    store: env.store,
    prefix: `${env.namespace}:ban`,
    now: env.now,
    // A fallback limiter has other limits; for the ban count, failing open is the safe reading.
    onStoreError: typeof settings.onStoreError === 'string' ? settings.onStoreError : 'allow',
    storeTimeoutMs: settings.storeTimeoutMs,
    onError: env.onError,
    refusalCache: env.refusalCache,
  });
}
