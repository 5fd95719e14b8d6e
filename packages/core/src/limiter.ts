import type { Decision } from './decision.js';
import { RateKitError, RateKitOptionError } from './errors.js';
import { decisionChannel } from './events.js';
import type { LimitOptions, ResolvedLimit } from './limit.js';
import { resolveLimitsOption } from './limits-option.js';
import { waitFor } from './limiter-wait.js';
import { storeFailure } from './store-failure.js';
import type { EvaluateMode } from './policy.js';
import { RefusalCache, resolveRefusalCacheOption } from './refusal-cache.js';
import { memoryConsumeOf } from './stores/direct-consume.js';
import { memoryStore } from './stores/memory.js';
import type { MaybePromise, RateLimitStore } from './stores/types.js';
import { resolveStoreTimeoutMs, storeCallBound } from './store-timeout.js';
import { assertFunction, assertKnownKeys, assertNonNegative, assertObject } from './validate.js';

/** The options {@link createLimiter} takes. */
const LIMITER_OPTIONS = ['limits', 'store', 'prefix', 'cost', 'now', 'onStoreError', 'storeTimeoutMs', 'onError', 'refusalCache'] as const;

/** One limit, several limits (all-or-nothing), or a function of the request context choosing them. */
export type LimitsOption<TContext> = LimitOptions | readonly LimitOptions[] | ((context: TContext) => LimitOptions | readonly LimitOptions[]);

/** What to do when the store fails or times out. See {@link LimiterOptions.onStoreError}. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the fallback limiter gets the caller's context, whatever its type (Limiter is invariant in it)
export type StoreErrorPolicy = 'throw' | 'allow' | 'deny' | Limiter<any>;

/** Options of {@link createLimiter}. */
export interface LimiterOptions<TContext = unknown> {
  /**
   * The policy: one limit, several limits checked all-or-nothing (if any
   * refuses, none is charged), or a function of the request context that
   * returns them (per route, per method, per plan). A function is called once
   * per request; return the same objects each time so they are validated once.
   */
  limits: LimitsOption<TContext>;
  /** Where state lives. @default a new {@link memoryStore} */
  store?: RateLimitStore;
  /**
   * This limiter's namespace in the store, so several limiters can share one
   * store without sharing counters. Must not contain a NUL character.
   * @default ''
   */
  prefix?: string;
  /** The cost of a request, or a function of its context. Overridden per call. @default 1 */
  cost?: number | ((context: TContext) => number);
  /** The clock, Unix epoch ms. Read once per decision; inject a fixed clock in tests. @default Date.now */
  now?: () => number;
  /**
   * What a failing or timed-out store call turns into:
   * - `'throw'`: reject with a `RateKitError` (code `ERR_RATEKIT_STORE`) for the caller to handle;
   * - `'allow'`: fail open, an allowed decision;
   * - `'deny'`: fail closed, a refusal with `retryAfterMs` of one second;
   * - a limiter, e.g. an in-memory one: decide with it instead.
   * With `'allow'`, `'deny'` or a fallback the error is passed to `onError`;
   * with `'throw'` the caller receives it. It is never swallowed.
   * @default 'throw'
   */
  onStoreError?: StoreErrorPolicy;
  /**
   * The longest a store call may take, in ms, before it counts as failed.
   * Applies to asynchronous stores. At most 2³¹ − 1 (what Node's timers
   * hold; a longer value is refused rather than fire after 1 ms), or
   * `Infinity` for no timeout.
   * @default 1_000
   */
  storeTimeoutMs?: number;
  /** Receives store failures handled by `onStoreError` (`'allow'`, `'deny'` or a fallback). @default console.error */
  onError?: (error: RateKitError) => void;
  /**
   * Refusals answered in-process, for a shared store (`store.shared`: Redis,
   * PostgreSQL, Memcached): the limiter keeps the keys the store has just
   * refused, and until when, and refuses the same request (same key, limits
   * and cost) again without calling the store until then, with the store's
   * answer re-timed (`Decision.source` is `'cache'`). It never changes a
   * decision; a refusal it cannot be sure will repeat is not kept (see
   * `refusal-cache.ts`).
   * - `true` or `{ maxKeys }`: on, holding at most `maxKeys` keys (least
   *   recently used evicted first; an evicted key is asked of the store again);
   * - `false`: off, every request goes to the store.
   * A `refund` or `reset` through this limiter forgets the key at once; one
   * through another limiter or process is seen when the kept refusal ends
   * (at most its `retryAfterMs`: for a blocked key, the rest of its block).
   * Ignored for in-process stores (the memory store answers from memory anyway).
   * @default `{ maxKeys: 10_000 }` when `store.shared`, else off
   * @throws {RateKitOptionError} at build time for anything but a boolean or `{ maxKeys }` with an integer ≥ 1.
   */
  refusalCache?: boolean | { maxKeys?: number };
}

/** Per-call options of the limiter operations. */
export interface CallOptions<TContext> {
  /** The cost of this call, overriding the limiter's `cost`. */
  cost?: number;
  /** The request context passed to dynamic `limits` and `cost` functions. */
  context?: TContext;
}

/** Options of {@link Limiter.wait}. */
export interface WaitOptions<TContext> extends CallOptions<TContext> {
  /** The longest to wait, in ms. If the budget cannot allow the call within it, `wait` rejects at once and charges nothing. */
  maxWaitMs: number;
  /** Aborts the wait; the promise rejects with the signal's reason and nothing is charged. */
  signal?: AbortSignal;
}

/**
 * A rate limiter: a policy applied to keys in a store.
 *
 * With the in-memory store every operation returns its result synchronously
 * (no Promise is created); with a remote store it returns a Promise. `await`
 * works on both.
 */
export interface Limiter<TContext = unknown> {
  /** Checks and charges. A refusal is a decision with `allowed: false` and charges nothing. */
  consume(key: string, options?: CallOptions<TContext>): MaybePromise<Decision>;
  /** Checks without charging: what `consume` would answer now. */
  peek(key: string, options?: CallOptions<TContext>): MaybePromise<Decision>;
  /** Gives `cost` back to every limit (never beyond full) and returns the state after it. */
  refund(key: string, options?: CallOptions<TContext>): MaybePromise<Decision>;
  /**
   * Forgets the key's state under every limit of this limiter. Bounded by
   * `storeTimeoutMs` and handled by `onStoreError` like the other operations
   * (`'allow'` and `'deny'` report the error to `onError` and resolve).
   */
  reset(key: string, options?: CallOptions<TContext>): MaybePromise<void>;
  /**
   * Resolves, charged, once the budget allows the call: for outbound
   * throttling. Rejects with code `ERR_RATEKIT_WAIT_TIMEOUT`, charging nothing,
   * when that would take longer than `maxWaitMs`, and with
   * `ERR_RATEKIT_NEVER_SATISFIABLE` when the cost exceeds a limit's capacity.
   */
  wait(key: string, options: WaitOptions<TContext>): Promise<Decision>;
  /** The store, for adapters and tests. */
  readonly store: RateLimitStore;
  /** The limits for a context (resolved and validated). */
  limitsFor(context?: TContext): readonly ResolvedLimit[];
}

/**
 * Builds a limiter. Every option is validated here, so a bad option fails at
 * start-up with a {@link RateKitOptionError} naming it.
 *
 * @throws {RateKitOptionError} on a bad option (code `ERR_RATEKIT_INVALID_OPTION`).
 * @example
 * ```ts
 * const limiter = createLimiter({
 *   limits: [
 *     { algorithm: 'gcra', limit: 10, windowMs: 1_000 },
 *     { algorithm: 'fixed-window', limit: 100, windowMs: 60_000 },
 *   ],
 * });
 * const decision = limiter.consume('user:42');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 */
export function createLimiter<TContext = unknown>(options: LimiterOptions<TContext>): Limiter<TContext> {
  assertObject('options', options);
  assertKnownKeys('', options, LIMITER_OPTIONS);
  // `null` is no store either (reading its methods would throw a TypeError instead of the coded error).
  if (options.store !== undefined && ((options.store as unknown) === null || typeof options.store.evaluate !== 'function' || typeof options.store.resetKey !== 'function')) {
    throw new RateKitOptionError('store', 'a RateLimitStore (with evaluate and resetKey)', options.store);
  }
  const namespace = options.prefix ?? '';
  if (typeof namespace !== 'string' || namespace.includes('\u0000')) {
    throw new RateKitOptionError('prefix', 'a string without NUL characters', namespace);
  }
  const now = options.now ?? Date.now;
  assertFunction('now', now);
  const onStoreError = options.onStoreError ?? 'throw';
  if (!(['throw', 'allow', 'deny'] as unknown[]).includes(onStoreError) && typeof (onStoreError as Limiter).consume !== 'function') {
    throw new RateKitOptionError('onStoreError', "'throw', 'allow', 'deny' or a fallback limiter", onStoreError);
  }
  const storeTimeoutMs = resolveStoreTimeoutMs(options.storeTimeoutMs);
  const onError = options.onError ?? ((error: RateKitError) => console.error(error));
  assertFunction('onError', onError);
  const defaultCost = options.cost ?? 1;
  if (typeof defaultCost !== 'function') assertNonNegative('cost', defaultCost);
  // The default memory store runs every algorithm, so only a given store is asked.
  const limitsFor = resolveLimitsOption(options.limits, options.store, typeof defaultCost === 'number' ? defaultCost : 0);
  // Made last, so a bad option does not leave a store (and its prune timer) behind.
  const store = options.store ?? memoryStore();
  // Every asynchronous store call is bounded by storeTimeoutMs, with one timer for all of them.
  const bounded = storeCallBound(storeTimeoutMs, store.name);
  // The memory store's direct path for a consume (no request object).
  const consumeDirect = memoryConsumeOf(store);
  // Shared stores only; off the in-memory path entirely (see `decide` below).
  const refusalCacheOption = resolveRefusalCacheOption(options.refusalCache, store);
  const refusals = refusalCacheOption === false ? undefined : new RefusalCache(refusalCacheOption.maxKeys);
  // A shared store that decides in process (e.g. @ratekit/synced) answers synchronously: so does its cache.
  let storeAnswersSync = false;
  const failure = storeFailure<TContext>(store.name, namespace, onStoreError, onError);

  function costOf(call: CallOptions<TContext> | undefined): number {
    const cost = call?.cost ?? (typeof defaultCost === 'function' ? defaultCost(call?.context as TContext) : defaultCost);
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) throw new RateKitOptionError('cost', 'a finite number >= 0', cost);
    return cost;
  }

  function run(mode: EvaluateMode, key: string, call: CallOptions<TContext> | undefined): MaybePromise<Decision> {
    if (typeof key !== 'string') throw new RateKitError('ERR_RATEKIT_KEY', `Expected the key to be a string, got ${typeof key}`);
    if (decisionChannel.hasSubscribers) return observed(mode, key, call, limitsFor(call?.context as TContext), costOf(call), now(), undefined);
    const limits = limitsFor(call?.context as TContext);
    const cost = costOf(call);
    const nowMs = now();
    let result: MaybePromise<Decision>;
    try {
      result = mode === 'consume' && consumeDirect !== undefined ? consumeDirect(key, namespace, limits, cost, nowMs) : store.evaluate({ key, namespace, limits, cost, mode, nowMs });
    } catch (error) {
      return recover(error, mode, key, call, limits, nowMs);
    }
    return isPromise(result) ? settled(result, mode, key, call, limits, nowMs) : result;
  }

  /**
   * A store's answer bounded by `storeTimeoutMs`, its failure recovered. A
   * function of its own so that `run` makes no closure: a closure there
   * puts run's variables in a context allocated on every call, about 95
   * instructions per in-memory decision (`bench/icount`).
   */
  function settled(result: Promise<Decision>, mode: EvaluateMode, key: string, call: CallOptions<TContext> | undefined, limits: readonly ResolvedLimit[], nowMs: number): Promise<Decision> {
    return bounded(result, undefined, (error) => recover(error, mode, key, call, limits, nowMs));
  }

  /**
   * {@link run} for a limiter with a refusal cache (shared stores only: the
   * in-memory path never comes here, see `decide`). A refusal the cache
   * keeps for this key, limits and cost is answered at once, without the
   * store; otherwise the store decides and its answer goes to the cache. A
   * refund forgets the key before it is sent and once it is answered.
   * Failures recovered by `onStoreError` never reach the cache.
   */
  function runCached(mode: EvaluateMode, key: string, call: CallOptions<TContext> | undefined, anyForm?: boolean): MaybePromise<Decision> {
    if (typeof key !== 'string') throw new RateKitError('ERR_RATEKIT_KEY', `Expected the key to be a string, got ${typeof key}`);
    const cache = refusals!;
    const limits = limitsFor(call?.context as TContext);
    const cost = costOf(call);
    const nowMs = now();
    if (mode === 'refund') cache.forget(key);
    else {
      const kept = cache.lookup(key, limits, cost, nowMs);
      if (kept !== undefined) {
        if (decisionChannel.hasSubscribers) {
          const { policy, allowed, remaining, retryAfterMs } = kept;
          decisionChannel.publish({ prefix: namespace, key, mode, policy, allowed, cost, remaining, retryAfterMs, store: store.name, storeDurationMs: 0, fallback: false, source: 'cache' });
        }
        // In the store's own form: a Promise for a store that answers with one (callers may rely on `.then`),
        // unless the caller takes either form (consumeInAnyForm: the adapters).
        return storeAnswersSync || anyForm === true ? kept : Promise.resolve(kept);
      }
    }
    const generation = cache.generation;
    const answered = (decision: Decision): Decision => {
      if (mode === 'refund') cache.forget(key);
      else cache.settle(key, limits, cost, nowMs, decision, generation);
      return decision;
    };
    if (decisionChannel.hasSubscribers) return observed(mode, key, call, limits, cost, nowMs, answered);
    let result: MaybePromise<Decision>;
    try {
      result = store.evaluate({ key, namespace, limits, cost, mode, nowMs });
    } catch (error) {
      return recover(error, mode, key, call, limits, nowMs);
    }
    if (!isPromise(result)) {
      storeAnswersSync = true;
      return answered(result);
    }
    return bounded(result, answered, (error) => recover(error, mode, key, call, limits, nowMs));
  }

  /**
   * {@link run} with a `ratekit:decision` subscriber: the same steps, timed
   * and published. `answered`, when given, sees the store's answers (not
   * the fallback's) first.
   */
  function observed(
    mode: EvaluateMode,
    key: string,
    call: CallOptions<TContext> | undefined,
    limits: readonly ResolvedLimit[],
    cost: number,
    nowMs: number,
    answered: ((decision: Decision) => Decision) | undefined,
  ): MaybePromise<Decision> {
    const request = { key, namespace, limits, cost, mode, nowMs };
    const startedMs = performance.now();
    const publish = (decision: Decision, fallback: boolean): Decision => {
      const { policy, allowed, cost, remaining, retryAfterMs } = decision;
      decisionChannel.publish({
        prefix: namespace,
        key,
        mode,
        policy,
        allowed,
        cost,
        remaining,
        retryAfterMs,
        store: store.name,
        storeDurationMs: performance.now() - startedMs,
        fallback,
        source: 'store',
      });
      return decision;
    };
    const fall = (error: unknown) => then(recover(error, mode, key, call, limits, request.nowMs), (decision) => publish(decision, true));
    let result: MaybePromise<Decision>;
    try {
      result = store.evaluate(request);
    } catch (error) {
      return fall(error);
    }
    if (!isPromise(result)) {
      storeAnswersSync = true;
      return publish(answered === undefined ? result : answered(result), false);
    }
    return bounded(result, (decision) => publish(answered === undefined ? decision : answered(decision), false), fall);
  }

  function resetKey(key: string, call: CallOptions<TContext> | undefined): MaybePromise<void> {
    // Forgotten when sent and again when answered (see RefusalCache.generation).
    refusals?.forget(key);
    const forget = refusals === undefined ? undefined : () => refusals.forget(key);
    const failed = (error: unknown): MaybePromise<void> => {
      failure.report(error, key);
      if (typeof onStoreError === 'object') return onStoreError.reset(key, call);
    };
    let result: MaybePromise<void>;
    try {
      result = store.resetKey(key, namespace, limitsFor(call?.context as TContext));
    } catch (error) {
      return failed(error);
    }
    if (!isPromise(result)) return result;
    return bounded(result, forget, failed);
  }

  function recover(error: unknown, mode: EvaluateMode, key: string, call: CallOptions<TContext> | undefined, limits: readonly ResolvedLimit[], nowMs: number): MaybePromise<Decision> {
    return failure.recover(error, mode, key, call, limits, nowMs, costOf);
  }

  // Chosen once: a limiter without a refusal cache (every in-memory one) runs `run` as before.
  const decide = refusals === undefined ? run : runCached;

  const limiter: Limiter<TContext> = {
    store,
    limitsFor,
    consume: (key, call) => decide('consume', key, call),
    peek: (key, call) => decide('peek', key, call),
    refund: (key, call) => decide('refund', key, call),
    reset: (key, call) => resetKey(key, call),
    wait: (key, call) => waitFor(decide, now, key, call),
  };
  anyFormConsumers.set(limiter, refusals === undefined ? (key, call) => run('consume', key, call) : (key, call) => runCached('consume', key, call, true));
  return limiter;
}

/** Per limiter made by {@link createLimiter}: its {@link consumeInAnyForm}. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each limiter's own context type, which the one map cannot name
const anyFormConsumers = new WeakMap<object, (key: string, call?: CallOptions<any>) => MaybePromise<Decision>>();

/**
 * `limiter.consume`, except that a refusal answered from the limiter's
 * refusal cache comes back as the decision itself, never wrapped in a
 * Promise (`consume` answers in the store's own form, so callers of a
 * Promise-answering store may rely on `.then`). For callers that take either
 * form, such as the framework adapters: a cached refusal then costs no
 * Promise and no turn of the microtask queue. The decisions are
 * `consume`'s. For a limiter not made by {@link createLimiter} (a stack, a
 * wrapper), its own `consume`, bound.
 *
 * Look it up once, not per request.
 *
 * @example
 * ```ts
 * const consume = consumeInAnyForm(limiter);
 * const decision = consume(key);
 * if (isPromise(decision)) decision.then(respond); else respond(decision);
 * ```
 */
export function consumeInAnyForm<TContext>(limiter: Limiter<TContext>): (key: string, call?: CallOptions<TContext>) => MaybePromise<Decision> {
  const own: ((key: string, call?: CallOptions<TContext>) => MaybePromise<Decision>) | undefined = anyFormConsumers.get(limiter);
  return own ?? ((key, call) => limiter.consume(key, call));
}

/** Applies `fn` now, or once the promise settles. */
function then<T, U>(value: MaybePromise<T>, fn: (value: T) => U): MaybePromise<U> {
  return isPromise(value) ? Promise.resolve(value).then(fn) : fn(value);
}

/**
 * True when a store answered with a promise (any thenable, which the caller
 * wraps in `Promise.resolve`) rather than a value. A `then` check, not
 * `instanceof Promise`: that cost about 50 instructions on every in-memory
 * decision (`bench/icount/count.sh fixed-window 1`: 1,340 before, 1,287 after).
 */
function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}
