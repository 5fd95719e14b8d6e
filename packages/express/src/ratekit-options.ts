/**
 * ratekit mode's options: which options select it, and how they become a
 * core limiter (one limit from `windowMs`/`limit`/`algorithm`, or `limits`;
 * `cost`, `prefix`, `onStoreError`, `storeTimeoutMs`, `onError`). The checks
 * and options both modes share are resolved first, in compat/options.ts
 * (their types are in common-config.ts).
 *
 * @module
 */
import {
  ALGORITHMS,
  type AlgorithmName,
  assertFunction,
  assertOneOf,
  assertPositive,
  consumeInAnyForm,
  createLimiter,
  type Decision,
  type HeaderOptions,
  type Limiter,
  type LimitOptions,
  type LimitsOption,
  type MaybePromise,
  type RateKitError,
  RateKitOptionError,
  resolveHeaderOptions,
  type StoreErrorPolicy,
} from '@ratekit/core';
import type { Request } from 'express';
import type { CommonConfig, Flavour } from './common-config.js';
import { isRateKitStore } from './is-ratekit-store.js';
import type { Options, ResolvedRateLimitOptions } from './types.js';

/** Options that only ratekit mode has: any of them selects it. */
export const RATEKIT_OPTIONS = ['algorithm', 'limits', 'cost', 'prefix', 'onStoreError', 'storeTimeoutMs', 'onError', 'refusalCache'] as const;

/** ratekit mode: a core limiter decides. */
export interface RateKitConfig extends CommonConfig {
  readonly mode: 'ratekit';
  readonly limiter: Limiter<Request>;
  /** The limiter's `consume` answering a cached refusal without a Promise (core's `consumeInAnyForm`). */
  readonly consume: (key: string, call?: { context: Request }) => MaybePromise<Decision>;
  /** True when `limits` or `cost` is a function, so the limiter needs the request as context. */
  readonly needsContext: boolean;
  /** Options for core's `rateLimitHeaders()`; `partitionKey` is set per request right before the synchronous call. */
  readonly headers: HeaderOptions | undefined;
  readonly onError: (error: RateKitError) => void;
  /** The namespace, for the double-count check. */
  readonly prefix: string;
}

/**
 * Builds ratekit mode's configuration: refuses what cannot work in it (a
 * `limit` function, an express-rate-limit store, an `identifier` function,
 * `passOnStoreError` beside `onStoreError`, any ratekit option in slowDown),
 * then creates the core limiter, which checks its own options.
 *
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option
 */
export function resolveRateKit(
  options: Partial<Options>,
  given: Record<string, unknown>,
  resolved: Record<string, unknown>,
  common: Omit<RateKitConfig, 'public' | 'limiter' | 'consume' | 'needsContext' | 'headers' | 'onError' | 'prefix'>,
  flavour: Flavour,
): RateKitConfig {
  if (flavour.name === 'slowDown') {
    const option = RATEKIT_OPTIONS.find((name) => given[name] !== undefined) ?? 'store';
    throw new RateKitOptionError(option, "unset in slowDown(), which counts requests as express-slow-down does (for ratekit's delay algorithm use rateLimit({ algorithm: 'delay' }))", given[option]);
  }
  if (typeof options.limit === 'function' || typeof options.max === 'function') {
    const name = typeof options.limit === 'function' ? 'limit' : 'max';
    throw new RateKitOptionError(name, 'a number in ratekit mode (for limits per request use `limits: (req) => ({ limit, windowMs })`)', options[name]);
  }
  if (options.store !== undefined && !isRateKitStore(options.store)) {
    throw new RateKitOptionError(
      'store',
      'a ratekit RateLimitStore when ratekit options are used (an express-rate-limit store only counts hits; wrap a ratekit store in RateKitStore for the other direction)',
      options.store,
    );
  }
  if (typeof options.identifier === 'function') {
    throw new RateKitOptionError('identifier', 'a string in ratekit mode (name each limit instead)', options.identifier);
  }
  if (options.passOnStoreError !== undefined && options.onStoreError !== undefined) {
    throw new RateKitOptionError('passOnStoreError', 'unset when `onStoreError` is given', options.passOnStoreError);
  }

  const limits = policyOf(given, options);
  const onError = options.onError ?? ((error: RateKitError) => common.logger.error(error));
  assertFunction('onError', onError);
  const onStoreError: StoreErrorPolicy | undefined = options.onStoreError ?? (options.passOnStoreError === true ? 'allow' : undefined);
  const prefix = options.prefix ?? '';

  // The core validates limits, cost, store, prefix, onStoreError, storeTimeoutMs and now, and names the option.
  const limiter = createLimiter<Request>({
    limits,
    store: options.store,
    prefix,
    cost: options.cost,
    now: common.now,
    onStoreError,
    storeTimeoutMs: options.storeTimeoutMs,
    onError,
    refusalCache: options.refusalCache,
  });
  common.validations.creationStack({ localKeys: !limiter.store.shared });

  const first = typeof limits === 'function' ? undefined : Array.isArray(limits) ? (limits as readonly LimitOptions[])[0] : (limits as LimitOptions);
  resolved['windowMs'] = first?.windowMs ?? common.windowMs;
  resolved['limit'] = first?.limit ?? resolved['limit'];
  resolved['algorithm'] = first?.algorithm ?? 'fixed-window';
  resolved['store'] = limiter.store;
  const headers = common.legacyHeaders || common.standard.draft !== false || common.standard.unsupported ? headerOptions(common) : undefined;

  return Object.freeze({
    ...common,
    public: frozenPublic(resolved, limiter),
    limiter,
    consume: consumeInAnyForm(limiter),
    needsContext: typeof limits === 'function' || typeof options.cost === 'function',
    headers,
    onError,
    prefix,
  });
}

/** The policy: `limits` as given, or one limit from `windowMs`, `limit`, `algorithm` and `identifier`. */
function policyOf(given: Record<string, unknown>, options: Partial<Options>): LimitsOption<Request> {
  if (options.limits !== undefined) {
    for (const name of ['windowMs', 'limit', 'max', 'algorithm', 'identifier'] as const) {
      if (given[name] !== undefined) {
        throw new RateKitOptionError(name, `unset when \`limits\` is given (set \`${name === 'identifier' ? 'name' : name === 'max' ? 'limit' : name}\` in each limit instead)`, given[name]);
      }
    }
    return options.limits;
  }
  const windowMs = options.windowMs ?? 60_000;
  assertPositive('windowMs', windowMs, ' of milliseconds');
  const limit = (options.limit ?? options.max ?? 5) as number;
  assertPositive(options.limit === undefined && options.max !== undefined ? 'max' : 'limit', limit);
  const algorithm: AlgorithmName = options.algorithm ?? 'fixed-window';
  assertOneOf('algorithm', algorithm, ALGORITHMS);
  const limitOptions: LimitOptions = { algorithm, limit, windowMs };
  if (typeof options.identifier === 'string') limitOptions.name = options.identifier;
  return limitOptions;
}

/** Core header options for ratekit mode; one List value per field, appended per limiter. */
function headerOptions(common: Pick<CommonConfig, 'legacyHeaders' | 'standard'>): HeaderOptions {
  const base = resolveHeaderOptions({ standardHeaders: common.standard.draft, legacyHeaders: common.legacyHeaders, combineLists: true });
  // An unsupported draft still turns Retry-After on, as express-rate-limit does.
  return { ...base, retryAfter: common.standard.unsupported ? true : undefined };
}

/** What handlers see in ratekit mode: frozen, with `mode` and `limiter` as non-enumerable extras. */
function frozenPublic(resolved: Record<string, unknown>, limiter: Limiter<Request>): ResolvedRateLimitOptions {
  Object.defineProperty(resolved, 'mode', { value: 'ratekit', enumerable: false });
  Object.defineProperty(resolved, 'limiter', { value: limiter, enumerable: false });
  return Object.freeze(resolved) as unknown as ResolvedRateLimitOptions;
}
