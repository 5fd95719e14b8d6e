import { assertFunction, assertObject, DEFAULT_REFUSAL_MESSAGE, defaultPolicyName, RateKitOptionError, type StandardHeaders } from '@ratekit/core';
import type { Request, Response } from 'express';
import type { CommonConfig, Flavour, KeyFunction, StandardHeaderSetting } from './common-config.js';
import { ConsoleLogger as consoleLogger } from './console-logger.js';
import { refuseWhatCanOnlyFail } from './failing-options.js';
import { defaultHandler } from './handler.js';
import { defaultKeyGenerator } from './key.js';
import { attachValidations, MemoryStore, type SyncCounter, syncCounter } from './memory-store.js';
import { hasStoreShape, INVALID_STORE_MESSAGE, isLegacyStore, PromisifiedStore } from './stores.js';
import type { Logger, Options, RateLimitInfo, RateLimitOptions, ResolvedRateLimitOptions, Store, ValueDeterminingMiddleware } from '../types.js';
import { createValidations } from './validations.js';
import { RATEKIT_OPTIONS, selectsRateKit } from '../ratekit-options.js';

/** express-rate-limit mode: an express-rate-limit store counts, the middleware compares with `limit`. */
export interface CounterConfig extends CommonConfig {
  readonly mode: 'express-rate-limit';
  readonly limit: number | ValueDeterminingMiddleware<number>;
  readonly store: Store;
  /** The synchronous path of the default store. */
  readonly counter: SyncCounter | undefined;
  readonly passOnStoreError: boolean;
}

export type Config = CounterConfig;

const RATE_LIMIT: Flavour = { name: 'rateLimit', defaults: {}, extraValidations: [], ownOptions: [] };

/**
 * Resolves the options of `rateLimit()` (or `slowDown()`), once per limiter,
 * following express-rate-limit v8's construction steps: options set to
 * `undefined` count as omitted; the checks run (logged, never thrown);
 * defaults are merged in; the store is chosen (a legacy store is wrapped),
 * its shape checked, and its `init` called synchronously with the resolved
 * options (failures logged, a promise not awaited).
 *
 * Options that select ratekit mode are refused: `rateLimit()` sends them to
 * ratekit mode (src/ratekit.ts) before this is called, and `slowDown()`
 * has no ratekit mode.
 *
 * @throws {TypeError} for an invalid `logger` or `store` (express-rate-limit's messages)
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) for an option that selects ratekit mode
 */
export function resolveOptions(passed: RateLimitOptions = {}, flavour: Flavour = RATE_LIMIT): Config {
  assertObject('options', passed);
  const given = withoutUndefined(passed);
  const options = { ...flavour.defaults, ...given } as Partial<Options> & Record<string, unknown>;

  const logger = (given['logger'] as Logger | undefined) ?? consoleLogger;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function' || typeof logger.warn !== 'function') {
    throw new TypeError('Provided logger does not implement the Logger interface');
  }
  if (selectsRateKit(given)) {
    const option = RATEKIT_OPTIONS.find((name) => given[name] !== undefined) ?? 'store';
    throw new RateKitOptionError(option, "unset in slowDown(), which counts requests as express-slow-down does (for ratekit's delay algorithm use rateLimit({ algorithm: 'delay' }))", given[option]);
  }
  const validate = options.validate ?? true;
  const validations = createValidations(validate, logger, flavour.extraValidations);
  validations.validationsConfig();
  validations.knownOptions(passed);
  validations.draftPolliHeaders(given['draft_polli_ratelimit_headers']);
  validations.onLimitReached(given['onLimitReached']);
  if (given['ipv6Subnet'] !== undefined && typeof given['ipv6Subnet'] !== 'function') validations.ipv6Subnet(given['ipv6Subnet']);
  validations.keyGeneratorIpFallback(given['keyGenerator']);
  validations.ipv6SubnetOrKeyGenerator(given);

  const now = options.now ?? (() => Date.now());
  assertFunction('now', now);
  const windowMs = options.windowMs ?? 60_000;
  const limit = options.limit ?? options.max ?? 5;
  const statusCode = options.statusCode ?? 429;
  const legacyHeaders = booleanOption(options.legacyHeaders ?? options.headers, true);
  const standard = standardHeaderSetting(options.standardHeaders, legacyHeaders);
  const requestPropertyName = options.requestPropertyName ?? 'rateLimit';
  const skipFailedRequests = booleanOption(options.skipFailedRequests, false);
  const skipSuccessfulRequests = booleanOption(options.skipSuccessfulRequests, false);
  const passOnStoreError = booleanOption(options.passOnStoreError, false);
  const requestWasSuccessful = options.requestWasSuccessful ?? ((_req: Request, res: Response) => res.statusCode < 400);
  const handler = options.handler ?? defaultHandler;
  const ipv6Subnet = options.ipv6Subnet ?? 56;
  const retryAfter = options.retryAfter;
  let identifier = options.identifier ?? ((req: Request) => defaultPolicyName((req as unknown as Record<string, RateLimitInfo>)[requestPropertyName]!.limit, windowMs));
  {
    // Values express-rate-limit takes and then fails with, on every request or in every header.
    const refuses = !flavour.ownOptions.includes('handler'); // slowDown refuses nothing: its `handler` is its own
    const checked = refuseWhatCanOnlyFail(options, {
      headersOn: legacyHeaders || standard.draft !== false,
      retryAfterSent: standard.retryAfter,
      draft8: standard.draft === 'draft-8',
      defaultHandler: options.handler === undefined,
      refuses,
    });
    if (options.identifier !== undefined) identifier = checked.identifier as typeof identifier;
  }

  const keyGenerator = (options.keyGenerator as KeyFunction | undefined) ?? defaultKeyGenerator(ipv6Subnet, validations);
  const common = {
    validations,
    logger,
    now,
    windowMs,
    skip: options.skip,
    keyGenerator,
    customKey: options.keyGenerator !== undefined,
    handler,
    identifier,
    retryAfter,
    legacyHeaders,
    standard,
    requestPropertyName,
    skipFailedRequests,
    skipSuccessfulRequests,
    requestWasSuccessful,
  };
  // What handlers and stores see: the defaults, then every option as given (unknown ones too, as express-rate-limit does).
  const resolved: Record<string, unknown> = {
    windowMs,
    limit,
    message: DEFAULT_REFUSAL_MESSAGE,
    statusCode,
    legacyHeaders,
    identifier,
    requestPropertyName,
    skipFailedRequests,
    skipSuccessfulRequests,
    requestWasSuccessful,
    skip: options.skip ?? (() => false),
    keyGenerator,
    ipv6Subnet,
    handler,
    passOnStoreError,
    ...options,
    standardHeaders: options.standardHeaders === true ? 'draft-6' : (options.standardHeaders ?? false),
    logger,
    validate: validations.enabled,
  };

  return resolveCounter(options, resolved, { ...common, mode: 'express-rate-limit', passOnStoreError }, limit);
}

function resolveCounter(
  options: Partial<Options>,
  resolved: Record<string, unknown>,
  common: Omit<CounterConfig, 'public' | 'limit' | 'store' | 'counter'>,
  limit: number | ValueDeterminingMiddleware<number>,
): CounterConfig {
  let store: Store;
  if (options.store === undefined) {
    const memory = new MemoryStore({ now: common.now });
    attachValidations(memory, common.validations);
    store = memory;
  } else if (isLegacyStore(options.store)) {
    store = new PromisifiedStore(options.store);
  } else {
    store = options.store;
  }
  if (!hasStoreShape(store)) throw new TypeError(INVALID_STORE_MESSAGE);
  resolved['store'] = store;
  const publicOptions = withMode(resolved);

  common.validations.creationStack(store);
  common.validations.unsharedStore(store);
  if (typeof store.init === 'function') {
    try {
      const started = store.init(publicOptions);
      if (started instanceof Promise) started.catch((error: unknown) => common.logger.error(error, 'express-rate-limit: async error during store initialization.'));
    } catch (error) {
      common.logger.error(error, 'express-rate-limit: error during store initialization.');
    }
  }
  return Object.freeze({ ...common, public: publicOptions, limit, store, counter: syncCounter(store) });
}

/** The drafts express-rate-limit v8 writes. */
const ERL_DRAFTS: readonly string[] = ['draft-6', 'draft-7', 'draft-8'];

/**
 * `standardHeaders`: `true` is draft-6; a known draft is itself; any other
 * truthy value is reported once
 * and sends none, as express-rate-limit does.
 */
function standardHeaderSetting(value: unknown, legacyHeaders: boolean): StandardHeaderSetting {
  if (value === undefined || value === false) return { draft: false, unsupported: false, retryAfter: legacyHeaders };
  if (value === true) return { draft: 'draft-6', unsupported: false, retryAfter: true };
  if (!value) return { draft: false, unsupported: false, retryAfter: legacyHeaders };
  const known = ERL_DRAFTS.includes(value as string);
  return { draft: known ? (value as StandardHeaders) : false, unsupported: !known, retryAfter: true };
}

/** What handlers see, with `mode` and `limiter` as non-enumerable extras (express-rate-limit's options have neither), not frozen, as express-rate-limit hands them over. */
function withMode(resolved: Record<string, unknown>): ResolvedRateLimitOptions {
  Object.defineProperty(resolved, 'mode', { value: 'express-rate-limit', enumerable: false });
  Object.defineProperty(resolved, 'limiter', { value: undefined, enumerable: false });
  return resolved as unknown as ResolvedRateLimitOptions;
}

/** The options minus those set to `undefined`, which count as omitted. Does not mutate. */
function withoutUndefined(options: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(options)) if (options[key] !== undefined) kept[key] = options[key];
  return kept;
}

/** A boolean option, taken for its truth, as express-rate-limit does. */
function booleanOption(value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  return typeof value === 'boolean' ? value : Boolean(value);
}
