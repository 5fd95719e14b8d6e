import {
  assertFunction,
  assertNonEmptyString,
  assertObject,
  assertPolicyName,
  DEFAULT_REFUSAL_MESSAGE,
  defaultPolicyName,
  type Limiter,
  RateKitOptionError,
  STANDARD_HEADER_DRAFTS,
  type StandardHeaders,
} from '@ratekit/core';
import type { Request, Response } from 'express';
import type { CommonConfig, Flavour, KeyFunction, StandardHeaderSetting } from '../common-config.js';
import { ConsoleLogger as consoleLogger } from './console-logger.js';
import { refuseWhatCanOnlyFail } from './failing-options.js';
import { defaultHandler } from './handler.js';
import { defaultKeyGenerator } from './key.js';
import { attachValidations, MemoryStore, type SyncCounter, syncCounter } from './memory-store.js';
import { isRateKitStore } from '../is-ratekit-store.js';
import { hasStoreShape, INVALID_STORE_MESSAGE, isLegacyStore, PromisifiedStore } from './stores.js';
import type { Logger, Options, RateLimitInfo, RateLimitMode, RateLimitOptions, ResolvedRateLimitOptions, Store, ValueDeterminingMiddleware } from '../types.js';
import { createValidations, type Validations } from './validations.js';
import { RATEKIT_OPTIONS, type RateKitConfig, resolveRateKit } from '../ratekit-options.js';

/** express-rate-limit mode: an express-rate-limit store counts, the middleware compares with `limit`. */
export interface CounterConfig extends CommonConfig {
  readonly mode: 'express-rate-limit';
  readonly validations: Validations;
  readonly limit: number | ValueDeterminingMiddleware<number>;
  readonly store: Store;
  /** The synchronous path of the default store. */
  readonly counter: SyncCounter | undefined;
  readonly passOnStoreError: boolean;
}

export type Config = CounterConfig | RateKitConfig;
export type { RateKitConfig };

const RATE_LIMIT: Flavour = { name: 'rateLimit', defaults: {}, extraValidations: [], ownOptions: [] };

/**
 * Resolves the options of `rateLimit()` (or `slowDown()`), once per limiter,
 * following express-rate-limit v8's construction steps: options set to
 * `undefined` count as omitted; the checks run (logged, never thrown);
 * defaults are merged in; the store is chosen (a legacy store is wrapped),
 * its shape checked, and its `init` called synchronously with the resolved
 * options (failures logged, a promise not awaited).
 *
 * Picks the mode: ratekit mode when any of `algorithm`, `limits`, `cost`,
 * `prefix`, `onStoreError`, `storeTimeoutMs`, `onError` is given or `store`
 * is a ratekit `RateLimitStore`; express-rate-limit mode otherwise.
 *
 * @throws {TypeError} for an invalid `logger` or `store` (express-rate-limit's messages)
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) for an option of the wrong type, or a ratekit option that cannot work with another one
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
  const validate = options.validate ?? true;
  // ratekit mode refuses options of the wrong type when the limiter is built. express-rate-limit mode
  // takes them as express-rate-limit does: its checks log what they log, and the values are used as given.
  const mode: RateLimitMode = RATEKIT_OPTIONS.some((name) => given[name] !== undefined) || isRateKitStore(given['store']) ? 'ratekit' : 'express-rate-limit';
  const strict = mode === 'ratekit';
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (strict && typeof validate !== 'boolean' && (typeof validate !== 'object' || validate === null || Array.isArray(validate))) {
    throw new RateKitOptionError('validate', 'a boolean or an object of check names', validate);
  }
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
  if (strict && (typeof windowMs !== 'number' || Number.isNaN(windowMs))) throw new RateKitOptionError('windowMs', 'a number of milliseconds', windowMs);
  const limit = options.limit ?? options.max ?? 5;
  if (strict && typeof limit !== 'function' && (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0)) {
    throw new RateKitOptionError(options.limit === undefined ? 'max' : 'limit', 'a finite number >= 0 or a function of the request', limit);
  }
  const statusCode = options.statusCode ?? 429;
  if (strict && (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599)) {
    throw new RateKitOptionError('statusCode', 'an integer from 100 to 599', statusCode);
  }
  const legacyHeaders = booleanOption('legacyHeaders', options.legacyHeaders ?? options.headers, true, strict);
  const standard = standardHeaderSetting(options.standardHeaders, legacyHeaders, strict);
  const requestPropertyName = options.requestPropertyName ?? 'rateLimit';
  if (strict) assertNonEmptyString('requestPropertyName', requestPropertyName);
  const skipFailedRequests = booleanOption('skipFailedRequests', options.skipFailedRequests, false, strict);
  const skipSuccessfulRequests = booleanOption('skipSuccessfulRequests', options.skipSuccessfulRequests, false, strict);
  const passOnStoreError = booleanOption('passOnStoreError', options.passOnStoreError, false, strict);
  const requestWasSuccessful = options.requestWasSuccessful ?? ((_req: Request, res: Response) => res.statusCode < 400);
  if (strict) assertFunction('requestWasSuccessful', requestWasSuccessful as unknown);
  if (strict && options.skip !== undefined) assertFunction('skip', options.skip as unknown);
  const handler = options.handler ?? defaultHandler;
  if (strict && !flavour.ownOptions.includes('handler')) assertFunction('handler', handler as unknown);
  if (strict && options.keyGenerator !== undefined) assertFunction('keyGenerator', options.keyGenerator as unknown);
  const ipv6Subnet = options.ipv6Subnet ?? 56;
  if (strict && ipv6Subnet !== false && typeof ipv6Subnet !== 'function' && !(Number.isInteger(ipv6Subnet) && ipv6Subnet >= 1 && ipv6Subnet <= 128)) {
    throw new RateKitOptionError('ipv6Subnet', 'an integer from 1 to 128, false, or a function of the request', ipv6Subnet);
  }
  const retryAfter = options.retryAfter;
  if (strict && retryAfter !== undefined && typeof retryAfter !== 'function' && (typeof retryAfter !== 'number' || !Number.isFinite(retryAfter) || retryAfter < 0)) {
    throw new RateKitOptionError('retryAfter', 'a number of seconds >= 0 or a function of the request', retryAfter);
  }
  let identifier = options.identifier ?? ((req: Request) => defaultPolicyName((req as unknown as Record<string, RateLimitInfo>)[requestPropertyName]!.limit, windowMs));
  if (strict && typeof identifier !== 'function') assertPolicyName('identifier', identifier);
  if (!strict) {
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
    // ratekit mode reads a null statusCode as unset (429): handlers must see that, not the null
    // (the default handler's res.status(null) threw, a 500 on every refusal).
    ...(strict ? { statusCode } : {}),
    standardHeaders: options.standardHeaders === true ? 'draft-6' : (options.standardHeaders ?? false),
    logger,
    validate: validations.enabled,
  };

  return mode === 'ratekit' ? resolveRateKit(options, given, resolved, { ...common, mode }, flavour) : resolveCounter(options, resolved, { ...common, mode, passOnStoreError }, limit);
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
  const publicOptions = freezePublic(resolved, 'express-rate-limit', undefined);

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

/** The drafts express-rate-limit v8 writes; ratekit mode also knows core's later ones. */
const ERL_DRAFTS: readonly string[] = ['draft-6', 'draft-7', 'draft-8'];

/**
 * `standardHeaders`: `true` is draft-6; a known draft is itself; any other
 * value (any other truthy one, in express-rate-limit mode) is reported once
 * and sends none, as express-rate-limit does.
 */
function standardHeaderSetting(value: unknown, legacyHeaders: boolean, strict: boolean): StandardHeaderSetting {
  if (value === undefined || value === false) return { draft: false, unsupported: false, retryAfter: legacyHeaders };
  if (value === true) return { draft: 'draft-6', unsupported: false, retryAfter: true };
  if (strict && typeof value !== 'string') throw new RateKitOptionError('standardHeaders', `false, true or one of ${STANDARD_HEADER_DRAFTS.map((d) => `'${d}'`).join(', ')}`, value);
  if (!value) return { draft: false, unsupported: false, retryAfter: legacyHeaders };
  const known = (strict ? (STANDARD_HEADER_DRAFTS as readonly string[]) : ERL_DRAFTS).includes(value as string);
  return { draft: known ? (value as StandardHeaders) : false, unsupported: !known, retryAfter: true };
}

/** What handlers see, with `mode` and `limiter` as non-enumerable extras (express-rate-limit's options have neither); frozen in ratekit mode. */
function freezePublic(resolved: Record<string, unknown>, mode: RateLimitMode, limiter: Limiter<Request> | undefined): ResolvedRateLimitOptions {
  Object.defineProperty(resolved, 'mode', { value: mode, enumerable: false });
  Object.defineProperty(resolved, 'limiter', { value: limiter, enumerable: false });
  // ratekit mode freezes them; express-rate-limit mode hands them over as express-rate-limit does.
  return (mode === 'ratekit' ? Object.freeze(resolved) : resolved) as unknown as ResolvedRateLimitOptions;
}

/** The options minus those set to `undefined`, which count as omitted. Does not mutate. */
function withoutUndefined(options: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(options)) if (options[key] !== undefined) kept[key] = options[key];
  return kept;
}

/** A boolean option: refused when not a boolean in ratekit mode (`strict`), else taken for its truth, as express-rate-limit does. */
function booleanOption(option: string, value: unknown, fallback: boolean, strict: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    if (strict) throw new RateKitOptionError(option, 'a boolean', value);
    return Boolean(value);
  }
  return value;
}
