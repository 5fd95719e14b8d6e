/**
 * @fastify/rate-limit 11's option names read for ratekit mode: `max`/`timeWindow` (a duration
 * string too), `allowList`, `groupId`, `hook`, `addHeaders`/`addHeadersOnExceeding`,
 * `enableDraftSpec`, `skipOnError`, `ban`, `continueExceeding`, `global`, `cache`, `nameSpace`, and
 * a route's options merged over the plugin's. Each is checked when the plugin is registered (a
 * route's when it is declared), as a `RateKitOptionError` naming its path, and turned into the
 * gate's options (`Settings.gate`) and what `ratekit-extras.ts` does per request.
 *
 * @module
 */
import {
  ALGORITHMS,
  assertFunction,
  assertInteger,
  assertNonEmptyString,
  assertObject,
  assertOneOf,
  assertSubnet,
  type GateAdapterSpec,
  type GateOptions,
  type HeaderOptions,
  type LimitOptions,
  type LimitsOption,
  type RateLimitStore,
  RateKitOptionError,
  resolveHeaderOptions,
  resolveLimit,
  type StandardHeaders,
} from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import type { ErrorResponseBuilderContext, RateLimitHook, RateLimitOptions, RateLimitPluginOptions, ValueOrPromise } from './types.js';
import { parseTimeWindow } from './compat/duration.js';

/** Where a function `max` puts its answer on the request, for the limit it chooses. */
export const kMax: unique symbol = Symbol('@ratekit/fastify.max');

/** One limiter's options, validated and normalised once: the gate's options, and what @fastify/rate-limit's names add. */
export interface Settings {
  /** The gate's options of this limiter (the registration adds `store`, `prefix`, `now`, `onError`, `refusalCache`). */
  readonly gate: GateOptions<FastifyRequest>;
  /** The options' path for the gate's errors (`config.rateLimit.cost`); undefined for the plugin's own options. */
  readonly optionNames: GateAdapterSpec['optionNames'];
  /** The `limits` ids of a static policy (to check that routes of a group agree); undefined when dynamic. */
  readonly limitIds: string | undefined;
  /** Set when `max` is a function: it is resolved per request and put on the request as `kMax`. */
  readonly maxFn: ((request: FastifyRequest, key: string) => ValueOrPromise<number>) | undefined;
  readonly allowSet: ReadonlySet<string> | undefined;
  readonly allowFn: ((request: FastifyRequest, key: string) => ValueOrPromise<boolean>) | undefined;
  readonly groupId: string | undefined;
  readonly hook: RateLimitHook;
  readonly errorResponseBuilder: ((request: FastifyRequest, context: ErrorResponseBuilderContext) => object) | undefined;
  /** Header options for core's `rateLimitHeaders`, or undefined when no header set is on. */
  readonly headers: Readonly<HeaderOptions> | undefined;
  /** Lower-case header names switched off on admitted responses / on refusals. */
  readonly hiddenOnPass: ReadonlySet<string> | undefined;
  readonly hiddenOnRefusal: ReadonlySet<string> | undefined;
  readonly onExceeding: ((request: FastifyRequest, key: string) => void) | undefined;
  readonly onExceeded: ((request: FastifyRequest, key: string) => void) | undefined;
  readonly onBanReach: ((request: FastifyRequest, key: string) => void) | undefined;
  /** Refusals before a ban; -1: never. */
  readonly ban: number;
  readonly continueExceeding: boolean;
}

/** The registration as a whole: the plugin-level settings plus what only the plugin takes. */
export interface Registration {
  /** The route-level options of the plugin, merged under every route's `config.rateLimit`. */
  readonly base: RateLimitOptions;
  readonly settings: Settings;
  readonly global: boolean;
  readonly nameSpace: string;
  readonly cache: number;
  readonly store: RateLimitStore | undefined;
  readonly now: (() => number) | undefined;
  /** core's `refusalCache` option, checked by core. */
  readonly refusalCache: RateLimitPluginOptions['refusalCache'];
}

/** Options a route, `rateLimit()` or `createRateLimit()` may set. */
const ROUTE_KEYS: ReadonlySet<string> = new Set<keyof RateLimitOptions>([
  'max',
  'timeWindow',
  'algorithm',
  'limits',
  'cost',
  'keyGenerator',
  'ipv6Subnet',
  'allowList',
  'groupId',
  'hook',
  'errorResponseBuilder',
  'addHeaders',
  'addHeadersOnExceeding',
  'enableDraftSpec',
  'standardHeaders',
  'legacyHeaders',
  'onExceeding',
  'onExceeded',
  'onBanReach',
  'skipOnError',
  'onStoreError',
  'storeTimeoutMs',
  'ban',
  'continueExceeding',
]);

/** Options only the plugin registration takes. */
const REGISTRATION_KEYS: ReadonlySet<string> = new Set<keyof RateLimitPluginOptions>(['global', 'store', 'cache', 'nameSpace', 'now', 'refusalCache']);

/** Fastify's own `register()` options, which reach the plugin in the same object. */
const FASTIFY_REGISTER_KEYS: ReadonlySet<string> = new Set(['prefix', 'logLevel', 'logSerializers']);

/** @fastify/rate-limit options this adapter does not take, with what to use instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  redis: 'unset when ratekit options are given: pass a ratekit `store` (for example from @ratekit/redis) instead',
  exponentialBackoff: "unset when ratekit options are given: use `continueExceeding`, or `limits` with `algorithm: 'delay'`",
  whitelist: 'unset: it was renamed `allowList`',
};

const POLICY_KEYS = ['max', 'timeWindow', 'algorithm'] as const;

/** The options of a route the gate checks, and names as `optionNames` give them. */
const GATE_CHECKED = ['cost', 'ipv6Subnet', 'keyGenerator', 'onStoreError', 'storeTimeoutMs'] as const;
const HEADER_FORMAT_KEYS = ['standardHeaders', 'legacyHeaders'] as const;

const DEFAULT_MAX = 1000;
const DEFAULT_WINDOW_MS = 60_000;
const DEFAULT_CACHE = 5_000;
const DEFAULT_NAMESPACE = 'fastify-rate-limit-';

/**
 * Validates the plugin's options.
 *
 * @throws {RateKitOptionError} naming the first bad or unknown option (code `ERR_RATEKIT_INVALID_OPTION`)
 */
export function resolveRegistration(options: RateLimitPluginOptions | undefined): Registration {
  const raw: RateLimitPluginOptions = options ?? {};
  assertObject('options', options ?? {});
  const base: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (ROUTE_KEYS.has(name)) base[name] = value;
    else if (!REGISTRATION_KEYS.has(name) && !FASTIFY_REGISTER_KEYS.has(name)) rejectUnknown(name, value, '');
  }
  const global = raw.global ?? true;
  assertBoolean('global', global);
  const nameSpace = raw.nameSpace ?? DEFAULT_NAMESPACE;
  if (typeof nameSpace !== 'string') throw new RateKitOptionError('nameSpace', 'a string', nameSpace);
  const cache = raw.cache ?? DEFAULT_CACHE;
  assertInteger('cache', cache, 1);
  if (raw.now !== undefined) assertFunction('now', raw.now);
  const store = raw.store as RateLimitStore | undefined;
  if (store !== undefined && ((store as unknown) === null || typeof store.evaluate !== 'function' || typeof store.resetKey !== 'function')) {
    throw new RateKitOptionError('store', 'a ratekit RateLimitStore (with evaluate and resetKey) when ratekit options are given; a @fastify/rate-limit store class works only without them', raw.store);
  }
  const settings = resolveSettings(base, '');
  return { base, settings, global, nameSpace, cache, store, now: raw.now, refusalCache: raw.refusalCache };
}

/**
 * `groupId`: the limiters of a group count in one namespace of the store, so they share one count
 * per key (unlike @fastify/rate-limit 11, its issue #463). The returned function gives a
 * limiter's group namespace (undefined without `groupId`).
 *
 * @throws {RateKitOptionError} naming `groupId` when a limiter's limits differ from its group's
 */
export function groupNamespaces(nameSpace: string): (settings: Settings, where: string, optionPath: string) => string | undefined {
  /** The static limit ids of each groupId, with the first place that configured it. */
  const groups = new Map<string, { ids: string | undefined; where: string }>();
  return ({ groupId, limitIds }, where, optionPath) => {
    if (groupId === undefined) return undefined;
    const first = groups.get(groupId);
    if (first === undefined) groups.set(groupId, { ids: limitIds, where });
    else if (first.ids !== limitIds) {
      throw new RateKitOptionError(`${optionPath}groupId`, `configured with the same limits as the rest of its group (first configured by ${first.where}), so the group shares one count`, groupId);
    }
    return `${nameSpace}group:${JSON.stringify(groupId)}`;
  };
}

/**
 * Validates a route's (or `rateLimit()`'s) options merged over the plugin's.
 *
 * @param path - the option path for error messages, e.g. `config.rateLimit (GET /items).`
 * @throws {RateKitOptionError} naming the first bad, unknown or registration-only option
 */
export function resolveRouteSettings(base: RateLimitOptions, override: unknown, path: string): Settings {
  assertObject(path.slice(0, -1), override);
  for (const [name, value] of Object.entries(override)) {
    if (ROUTE_KEYS.has(name)) continue;
    if (REGISTRATION_KEYS.has(name)) throw new RateKitOptionError(`${path}${name}`, 'unset: it is a plugin option, set when the plugin is registered', value);
    rejectUnknown(name, value, path);
  }
  return resolveSettings(mergeOptions(base, override), path);
}

/**
 * Merges route options over the plugin's, one option at a time, replacing
 * related options together (see {@link RateLimitOptions}). Does not mutate.
 */
export function mergeOptions(base: RateLimitOptions, override: RateLimitOptions): RateLimitOptions {
  const merged: Record<string, unknown> = { ...base };
  for (const [name, value] of Object.entries(override)) if (value !== undefined) merged[name] = value;
  const given = (name: keyof RateLimitOptions) => override[name] !== undefined;
  if (given('limits')) for (const name of POLICY_KEYS) if (!given(name)) delete merged[name];
  if (POLICY_KEYS.some(given) && !given('limits')) delete merged.limits;
  if (given('enableDraftSpec')) for (const name of HEADER_FORMAT_KEYS) if (!given(name)) delete merged[name];
  if (HEADER_FORMAT_KEYS.some(given) && !given('enableDraftSpec')) delete merged.enableDraftSpec;
  if (given('skipOnError') && !given('onStoreError')) delete merged.onStoreError;
  if (given('onStoreError') && !given('skipOnError')) delete merged.skipOnError;
  return merged;
}

function resolveSettings(o: RateLimitOptions, path: string): Settings {
  const at = (name: string) => `${path}${name}`;
  const policy = resolvePolicy(o, at);

  // The gate checks cost, ipv6Subnet, keyGenerator, onStoreError and storeTimeoutMs when it is built, naming them by
  // `optionNames`; an ipv6Subnet it never sees (a keyGenerator makes the key) is checked here.
  const ipv6Subnet = o.ipv6Subnet ?? 56;
  if (o.keyGenerator !== undefined) assertSubnet(ipv6Subnet, at('ipv6Subnet'));

  let allowSet: Set<string> | undefined;
  let allowFn: Settings['allowFn'];
  if (typeof o.allowList === 'function') allowFn = o.allowList;
  else if (o.allowList !== undefined) {
    if (!Array.isArray(o.allowList) || !o.allowList.every((k) => typeof k === 'string')) {
      throw new RateKitOptionError(at('allowList'), 'an array of key strings or a function', o.allowList);
    }
    if (o.allowList.length > 0) allowSet = new Set(o.allowList);
  }

  if (o.groupId !== undefined) assertNonEmptyString(at('groupId'), o.groupId);
  const hook = o.hook ?? 'onRequest';
  assertOneOf(at('hook'), hook, ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const);
  for (const name of ['errorResponseBuilder', 'onExceeding', 'onExceeded', 'onBanReach'] as const) {
    if (o[name] !== undefined) assertFunction(at(name), o[name]);
  }

  const headers = resolveHeaders(o, at);
  const sent = headers === undefined ? new Set<string>() : sentHeaderNames(headers.standardHeaders, headers.legacyHeaders);
  const hiddenOnPass = hiddenHeaders(o.addHeadersOnExceeding, sent, at('addHeadersOnExceeding'));
  const hiddenOnRefusal = hiddenHeaders(o.addHeaders, new Set([...sent, 'retry-after']), at('addHeaders'));

  const skipOnError = o.skipOnError ?? false;
  assertBoolean(at('skipOnError'), skipOnError);
  if (skipOnError && o.onStoreError !== undefined && o.onStoreError !== 'allow') {
    throw new RateKitOptionError(at('skipOnError'), "unset when `onStoreError` is set (skipOnError is onStoreError: 'allow')", skipOnError);
  }
  const onStoreError = o.onStoreError ?? (skipOnError ? 'allow' : 'throw');

  const ban = o.ban ?? -1;
  assertInteger(at('ban'), ban, -1);
  const continueExceeding = o.continueExceeding ?? false;
  assertBoolean(at('continueExceeding'), continueExceeding);
  if (continueExceeding && !policy.single) {
    throw new RateKitOptionError(at('continueExceeding'), 'false unless the policy is one limit (`max`/`timeWindow`, or `limits` with one limit, not a function)', true);
  }

  const gate: GateOptions<FastifyRequest> = {
    limits: policy.limits,
    cost: o.cost,
    // The gate's default key is request.ip (past Fastify's trustProxy), grouped by ipv6Subnet.
    ...(o.keyGenerator === undefined ? { ipv6Subnet } : { keyGenerator: o.keyGenerator as GateOptions<FastifyRequest>['keyGenerator'] }),
    standardHeaders: headers?.standardHeaders ?? false,
    legacyHeaders: headers?.legacyHeaders ?? false,
    onStoreError,
    storeTimeoutMs: o.storeTimeoutMs,
  };
  const optionNames = path === '' ? undefined : Object.fromEntries(GATE_CHECKED.map((name) => [name, at(name)]));
  return Object.freeze({
    gate,
    optionNames,
    limitIds: policy.limitIds,
    maxFn: policy.maxFn,
    allowSet,
    allowFn,
    groupId: o.groupId,
    hook,
    errorResponseBuilder: o.errorResponseBuilder,
    headers,
    hiddenOnPass,
    hiddenOnRefusal,
    onExceeding: o.onExceeding,
    onExceeded: o.onExceeded,
    onBanReach: o.onBanReach,
    ban,
    continueExceeding,
  });
}

interface Policy {
  limits: LimitsOption<FastifyRequest>;
  limitIds: string | undefined;
  maxFn: Settings['maxFn'];
  /** True for a policy of exactly one limit, known at registration. */
  single: boolean;
}

/** Turns `limits`, or `max`/`timeWindow`/`algorithm`, into core's `limits` option. */
function resolvePolicy(o: RateLimitOptions, at: (name: string) => string): Policy {
  if (o.limits !== undefined) {
    for (const name of POLICY_KEYS) {
      if (o[name] !== undefined) throw new RateKitOptionError(at(name), 'unset when `limits` is given (put it in the limits)', o[name]);
    }
    const userLimits = o.limits;
    if (typeof userLimits === 'function') {
      return { limits: userLimits, limitIds: undefined, maxFn: undefined, single: false };
    }
    const list: readonly LimitOptions[] = Array.isArray(userLimits) ? userLimits : [userLimits as LimitOptions];
    if (list.length === 0) throw new RateKitOptionError(at('limits'), 'at least one limit', userLimits);
    const resolved = list.map((limit, i) => resolveLimit(limit, Array.isArray(userLimits) ? at(`limits[${i}]`) : at('limits')));
    return { limits: userLimits, limitIds: resolved.map((l) => l.id).join('\n'), maxFn: undefined, single: list.length === 1 };
  }

  const algorithm = o.algorithm ?? 'fixed-window';
  assertOneOf(at('algorithm'), algorithm, ALGORITHMS);
  const windowMs = parseTimeWindow(o.timeWindow ?? DEFAULT_WINDOW_MS, at('timeWindow'));
  const max = o.max ?? DEFAULT_MAX;
  if (typeof max === 'function') {
    // One LimitOptions object per distinct max, so core validates each once.
    const byMax = new Map<number, LimitOptions>();
    const limitFor = (request: FastifyRequest): LimitOptions => {
      const value = (request as unknown as Record<symbol, number>)[kMax]!;
      let limit = byMax.get(value);
      if (limit === undefined) {
        limit = { algorithm, limit: value, windowMs };
        if (byMax.size >= 1_000) byMax.clear();
        byMax.set(value, limit);
      }
      return limit;
    };
    return { limits: limitFor, limitIds: undefined, maxFn: max, single: true };
  }
  assertInteger(at('max'), max, 1);
  const limit: LimitOptions = { algorithm, limit: max, windowMs };
  return { limits: limit, limitIds: resolveLimit(limit, at('max')).id, maxFn: undefined, single: true };
}

/** The header format: `enableDraftSpec`, or `standardHeaders`/`legacyHeaders`; undefined when no header is sent. */
function resolveHeaders(o: RateLimitOptions, at: (name: string) => string): Readonly<HeaderOptions> | undefined {
  let standardHeaders: StandardHeaders | true | undefined = o.standardHeaders;
  let legacyHeaders = o.legacyHeaders;
  if (o.enableDraftSpec !== undefined) {
    assertBoolean(at('enableDraftSpec'), o.enableDraftSpec);
    if (o.enableDraftSpec) {
      for (const name of HEADER_FORMAT_KEYS) {
        if (o[name] !== undefined) throw new RateKitOptionError(at(name), 'unset when `enableDraftSpec` is true (it means standardHeaders: draft-6, legacyHeaders: false)', o[name]);
      }
      standardHeaders = 'draft-6';
      legacyHeaders = false;
    }
  }
  const resolved = resolveHeaderOptions(
    {
      standardHeaders: standardHeaders ?? false,
      legacyHeaders: legacyHeaders ?? (standardHeaders === undefined || standardHeaders === false),
      // @fastify/rate-limit sends the legacy reset as seconds from now, and Fastify's reply.header overwrites.
      legacyReset: 'delta',
      combineLists: true,
    },
    path(at),
  );
  return resolved.standardHeaders === false && !resolved.legacyHeaders ? undefined : resolved;
}

/** The option-path prefix without its trailing dot, as core's `resolveHeaderOptions` wants it. */
function path(at: (name: string) => string): string {
  const prefix = at('');
  return prefix.endsWith('.') ? prefix.slice(0, -1) : prefix;
}

/** The lower-case names of the headers a format sends (Retry-After aside). */
function sentHeaderNames(standard: StandardHeaders, legacy: boolean): Set<string> {
  const names = new Set<string>();
  if (legacy) for (const n of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) names.add(n);
  if (standard === 'draft-6') for (const n of ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) names.add(n);
  else if (standard !== false) for (const n of ['ratelimit', 'ratelimit-policy']) names.add(n);
  return names;
}

/** Validates an `addHeaders`-style map and returns the names switched off (undefined when none). */
function hiddenHeaders(map: unknown, sent: ReadonlySet<string>, option: string): ReadonlySet<string> | undefined {
  if (map === undefined) return undefined;
  assertObject(option, map);
  const hidden = new Set<string>();
  for (const [name, on] of Object.entries(map)) {
    const lower = name.toLowerCase();
    if (!sent.has(lower)) {
      const known = [...sent].map((n) => `'${n}'`).join(', ') || 'none: no header is sent';
      throw new RateKitOptionError(`${option}['${name}']`, `a header the configured format sends (${known})`, on);
    }
    assertBoolean(`${option}['${name}']`, on);
    if (!on) hidden.add(lower);
  }
  return hidden.size > 0 ? hidden : undefined;
}

function rejectUnknown(name: string, value: unknown, path: string): never {
  throw new RateKitOptionError(`${path}${name}`, UNSUPPORTED[name] ?? 'unset: it is not an option of @ratekit/fastify', value);
}

function assertBoolean(option: string, value: unknown): asserts value is boolean {
  if (typeof value !== 'boolean') throw new RateKitOptionError(option, 'a boolean', value);
}
