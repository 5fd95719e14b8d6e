import { parse } from '@lukeed/ms';
import { resolveStoreTimeoutMs } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import { refuseWhatCanOnlyFail } from './failing-options.js';
import { normalizeIPv6Subnet } from './normalize-ip.js';

/** @fastify/rate-limit 11's defaults. */
export const DEFAULT_MAX = 1000;
export const DEFAULT_TIME_WINDOW_MS = 60_000;

/** The header names, and which of them are sent, for the legacy (`x-ratelimit-*`) or draft (`ratelimit-*`) set. */
export interface HeaderLabels {
  readonly rateLimit: string;
  readonly rateRemaining: string;
  readonly rateReset: string;
  readonly retryAfter: string;
}

export const LEGACY_LABELS: HeaderLabels = {
  rateLimit: 'x-ratelimit-limit',
  rateRemaining: 'x-ratelimit-remaining',
  rateReset: 'x-ratelimit-reset',
  retryAfter: 'retry-after',
};

export const DRAFT_LABELS: HeaderLabels = {
  rateLimit: 'ratelimit-limit',
  rateRemaining: 'ratelimit-remaining',
  rateReset: 'ratelimit-reset',
  retryAfter: 'retry-after',
};

type PerRequest<T> = (request: FastifyRequest, key: string) => T | Promise<T>;
type Hook = (request: FastifyRequest, key: string) => void;

/**
 * One limiter's options as @fastify/rate-limit 11 resolves them: the
 * plugin's options with its defaults and fallbacks, and a route's options
 * merged over them. Any other option a user passed is kept, except the
 * plugin's `cache`: it sizes the plugin's own in-memory store only, so a
 * route's store (`child(merged)`) holds 5 000 keys unless the route sets
 * its own `cache` (upstream's resolved options have no `cache`).
 */
export interface CompatParams {
  readonly [option: string]: unknown;
  readonly global: boolean;
  readonly enableDraftSpec: boolean;
  readonly labels: HeaderLabels;
  readonly addHeaders: Readonly<Record<string, unknown>>;
  readonly addHeadersOnExceeding: Readonly<Record<string, unknown>>;
  readonly max: number | PerRequest<number>;
  readonly timeWindow: number | PerRequest<number>;
  readonly hook: string;
  readonly allowList: readonly unknown[] | PerRequest<boolean> | null;
  /** Over-limit hits before a ban (403); -1: never. */
  readonly ban: number;
  readonly onBanReach: Hook;
  readonly onExceeding: Hook;
  readonly onExceeded: Hook;
  readonly continueExceeding: boolean;
  readonly exponentialBackoff: boolean;
  readonly ipv6Subnet: number;
  /** Undefined for the default key, the client IP. */
  readonly keyGenerator: ((request: FastifyRequest) => unknown) | undefined;
  readonly errorResponseBuilder: ((request: FastifyRequest, context: ErrorResponseBuilderContext) => unknown) | undefined;
  readonly skipOnError: boolean;
  /** The longest a store call may take before it counts as failed (ratekit's addition; upstream waits for ever). */
  readonly storeTimeoutMs: number;
  readonly groupId?: string;
}

/** What `errorResponseBuilder` is given, as @fastify/rate-limit 11 builds it. */
export interface ErrorResponseBuilderContext {
  /** 429, or 403 once `ban` is exceeded. */
  statusCode: number;
  ban: boolean;
  /** `Retry-After` in words, e.g. `1 minute` (`@lukeed/ms` long format). */
  after: string;
  max: number;
  /** Ms until the window ends, as the store answered. */
  ttl: number;
}

/** Receives the warning for an option value that fell back to its default. */
export type Warn = (message: string) => void;

const noop: Hook = () => {};

/**
 * The plugin's options, resolved as @fastify/rate-limit 11 does: wrong types
 * and out-of-range values fall back to the defaults instead of throwing. A
 * value that was given but is unusable (a NaN or negative `max` or
 * `timeWindow`, a `timeWindow` string `@lukeed/ms` cannot read) is also
 * reported through `warn` (Fastify's logger), which upstream does not do.
 *
 * @throws {RateKitOptionError} for a value that can only fail (see {@link refuseWhatCanOnlyFail})
 */
export function resolvePluginParams(settings: Readonly<Record<string, unknown>>, warn: Warn): CompatParams {
  refuseWhatCanOnlyFail(settings, '', 'plugin');
  const enableDraftSpec = settings.enableDraftSpec === true;
  const labels = enableDraftSpec ? DRAFT_LABELS : LEGACY_LABELS;
  const fn = <T>(value: unknown, fallback: T): T => (typeof value === 'function' ? (value as T) : fallback);
  const { cache: _pluginStoreOnly, ...kept } = settings;
  return {
    ...kept,
    global: typeof settings.global === 'boolean' ? settings.global : true,
    enableDraftSpec,
    labels,
    addHeaders: { [labels.rateLimit]: true, [labels.rateRemaining]: true, [labels.rateReset]: true, [labels.retryAfter]: true, ...(settings.addHeaders as object) },
    addHeadersOnExceeding: { [labels.rateLimit]: true, [labels.rateRemaining]: true, [labels.rateReset]: true, ...(settings.addHeadersOnExceeding as object) },
    max: resolveMax(settings.max, 'max', warn),
    timeWindow: resolveTimeWindow(settings.timeWindow, 'timeWindow', warn),
    hook: typeof settings.hook === 'string' && settings.hook !== '' ? settings.hook : 'onRequest',
    allowList: (settings.allowList as CompatParams['allowList']) || null,
    ban: resolveBan(settings.ban),
    onBanReach: fn(settings.onBanReach, noop),
    onExceeding: fn(settings.onExceeding, noop),
    onExceeded: fn(settings.onExceeded, noop),
    continueExceeding: settings.continueExceeding === true,
    exponentialBackoff: settings.exponentialBackoff === true,
    ipv6Subnet: normalizeIPv6Subnet(settings.ipv6Subnet),
    keyGenerator: fn(settings.keyGenerator, undefined),
    errorResponseBuilder: fn(settings.errorResponseBuilder, undefined),
    skipOnError: settings.skipOnError === true,
    storeTimeoutMs: resolveStoreTimeoutMs(settings.storeTimeoutMs),
  };
}

/**
 * A route's (or `rateLimit(options)`'s) options merged over the plugin's,
 * as @fastify/rate-limit 11 merges them: option by option, `max`,
 * `timeWindow`, `ban` and `ipv6Subnet` read again with their fallbacks.
 *
 * @param routeInfo - the route's options (`{}` for `rateLimit()`/`createRateLimit()`), handed to `store.child()`
 * @throws {Error} `groupId must be a string`, as upstream, when `groupId` is given but is not a string
 * @throws {RateKitOptionError} for a value that can only fail (see {@link refuseWhatCanOnlyFail}), e.g. `onExceeding: 1`
 */
export function mergeRouteParams(plugin: CompatParams, route: Readonly<Record<string, unknown>>, routeInfo: object, where: string, warn: Warn): CompatParams & { routeInfo: object } {
  if (route.groupId !== undefined && typeof route.groupId !== 'string') throw new Error('groupId must be a string');
  refuseWhatCanOnlyFail(route, where, 'route');
  const merged = { ...plugin, ...route, routeInfo };
  return {
    ...merged,
    max: 'max' in route ? resolveMax(route.max, `${where}max`, warn) : plugin.max,
    timeWindow: 'timeWindow' in route ? resolveTimeWindow(route.timeWindow, `${where}timeWindow`, warn) : plugin.timeWindow,
    ban: resolveBan(merged.ban),
    ipv6Subnet: normalizeIPv6Subnet(merged.ipv6Subnet),
    storeTimeoutMs: 'storeTimeoutMs' in route ? resolveStoreTimeoutMs(route.storeTimeoutMs) : plugin.storeTimeoutMs,
    keyGenerator: typeof merged.keyGenerator === 'function' ? merged.keyGenerator : undefined,
    errorResponseBuilder: typeof merged.errorResponseBuilder === 'function' ? merged.errorResponseBuilder : undefined,
  };
}

function resolveMax(value: unknown, option: string, warn: Warn): CompatParams['max'] {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.trunc(value);
  if (typeof value === 'function') return value as PerRequest<number>;
  if (value !== undefined) warn(fallbackMessage(option, 'a finite number >= 0 or a function', value, DEFAULT_MAX));
  return DEFAULT_MAX;
}

function resolveTimeWindow(value: unknown, option: string, warn: Warn): CompatParams['timeWindow'] {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.trunc(value);
  if (typeof value === 'string') {
    const ms = parse(value);
    if (ms !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  }
  if (typeof value === 'function') return value as PerRequest<number>;
  if (value !== undefined) warn(fallbackMessage(option, "a finite number of ms >= 0, a duration string such as '1 minute', or a function", value, DEFAULT_TIME_WINDOW_MS));
  return DEFAULT_TIME_WINDOW_MS;
}

function resolveBan(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : -1;
}

function fallbackMessage(option: string, expected: string, given: unknown, fallback: number): string {
  const shown = typeof given === 'string' ? JSON.stringify(given) : typeof given === 'function' ? 'a function' : printable(given);
  return `[@ratekit/fastify] \`${option}\` should be ${expected}, got ${shown}: using the default, ${fallback} (as @fastify/rate-limit does)`;
}

/** `String(value)`, or `an object` for one that cannot become a string (a null prototype). */
function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return 'an object';
  }
}
