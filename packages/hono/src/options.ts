/**
 * ratekit mode's options ({@link RateLimitOptions}) and their checks: every
 * option is checked when the middleware is built, and a bad one throws a
 * `RateKitOptionError` (code `ERR_RATEKIT_INVALID_OPTION`) naming it. The
 * limiter's own options (`limits`, `cost`, `store`, `prefix`,
 * `onStoreError`, `storeTimeoutMs`, `onError`, `now`, `refusalCache`) are
 * checked by @ratekit/core's `createLimiter`.
 *
 * @module
 */
import {
  ALGORITHMS,
  type AlgorithmName,
  assertFunction,
  assertInteger,
  assertOneOf,
  assertPositive,
  type Decision,
  type HeaderOptions,
  type Limiter,
  type LimitOptions,
  type LimitsOption,
  type RateKitError,
  RateKitOptionError,
  type RateLimitStore,
  resolveHeaderOptions,
  type StandardHeaders,
  type TrustProxy,
} from '@ratekit/core';
import type { Context } from 'hono';
import { clientKeyOf, type GetConnInfo } from './client-key.js';

/** What `keyGenerator` may return: a key, or `false` to let the request through unlimited. */
export type KeyResult = string | number | false;

/**
 * Options of {@link rateLimit} (ratekit mode). `TContext` is the Hono
 * context type the callbacks receive.
 */
export interface RateLimitOptions<TContext extends Context = Context> {
  /** Requests (cost units) per `windowMs` and key. Ignored when `limits` is given. @default 5 (as hono-rate-limiter) */
  limit?: number;
  /** The window, in milliseconds. @default 60_000 */
  windowMs?: number;
  /** The algorithm of the `limit`/`windowMs` limit (@ratekit/core's `ALGORITHMS`). @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /**
   * The policy instead of `limit`/`windowMs`/`algorithm`: one limit, several
   * checked all-or-nothing (if one refuses, none is charged), or a function
   * of the context choosing them per request (return the same objects each
   * time, so they are validated once). Each limit may carry `blockDurationMs`.
   */
  limits?: LimitsOption<TContext>;
  /** The cost of a request, or a function of the context. @default 1 */
  cost?: number | ((c: TContext) => number);
  /**
   * The key of a request. Return `false` to let it through unlimited (no
   * headers). Throwing, or returning nothing usable, fails the request with
   * a `RateKitError` of code `ERR_RATEKIT_KEY` (Hono answers 500).
   * @default the client IP from `getConnInfo`, grouped by `ipv6Subnet` (required unless `keyGenerator` is given)
   */
  keyGenerator?: (c: TContext) => KeyResult | Promise<KeyResult>;
  /**
   * Hono's `getConnInfo` for the runtime the app runs on: from `hono/bun`,
   * `hono/deno`, `hono/cloudflare-workers` or `@hono/node-server/conninfo`.
   * The default key reads the client address from it. Required when
   * `keyGenerator` is not given: there is no fall-back to a header.
   */
  getConnInfo?: GetConnInfo;
  /**
   * Which connections are your proxies, so that `X-Forwarded-For` is read
   * past them: `false`, a number of hops, or `(address, hop) => boolean`.
   * `true` is refused (any client could choose its key).
   * @default false
   */
  trustProxy?: TrustProxy;
  /** The prefix length IPv6 clients are grouped by in the default key (1–128), or `false` for whole addresses. @default 56 */
  ipv6Subnet?: number | false;
  /** When it returns true, the request passes unlimited and uncounted, with no headers. May return a Promise. */
  skip?: (c: TContext) => boolean | Promise<boolean>;
  /**
   * Which IETF RateLimit header fields to send: `'draft-6'`, `'draft-7'`,
   * `'draft-8'` (to `'draft-11'`, one wire format: named policies, the key
   * hashed as `pk`), `true` (= `'draft-6'`) or `false`.
   * @default 'draft-6' (as hono-rate-limiter)
   */
  standardHeaders?: StandardHeaders | true;
  /** Send `X-RateLimit-Limit`/`-Remaining`/`-Reset` too. @default false */
  legacyHeaders?: boolean;
  /** The status of a refusal, 400–599. @default 429 */
  statusCode?: number;
  /** The refusal body: text, an object sent as JSON, or a function of the context and decision. @default 'Too many requests, please try again later.' */
  message?: string | Record<string, unknown> | ((c: TContext, decision: Decision) => string | Record<string, unknown> | Promise<string | Record<string, unknown>>);
  /** Answers a refusal instead of `statusCode` + `message` (the headers are already set). */
  handler?: (c: TContext, decision: Decision) => Response | Promise<Response>;
  /** Give the cost back when the response failed (`requestWasSuccessful` false, or the handler threw). @default false */
  skipFailedRequests?: boolean;
  /** Give the cost back when the response succeeded. @default false */
  skipSuccessfulRequests?: boolean;
  /** Whether a response counts as a success. @default (c) => c.res.status < 400 */
  requestWasSuccessful?: (c: TContext) => boolean | Promise<boolean>;
  /** The context variable the decision is put in (`c.get('rateLimit')`). @default 'rateLimit' */
  requestPropertyName?: string;
  /**
   * Called with every decision (metrics, logs). A Promise it returns is
   * background work: handed to `c.executionCtx.waitUntil` where the runtime
   * has one, else awaited; a rejection goes to `onError`.
   */
  onDecision?: (decision: Decision, c: TContext) => void | Promise<void>;
  /** Where state lives: any ratekit store (memory, Redis, PostgreSQL, Memcached, the edge stores). @default a new in-memory store */
  store?: RateLimitStore;
  /** This middleware's namespace in the store (no NUL). @default '' */
  prefix?: string;
  /** What a failing or timed-out store call turns into: `'throw'` (500), `'allow'`, `'deny'` or a fallback limiter. @default 'throw' */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the fallback limiter gets the caller's context, whatever its type
  onStoreError?: 'throw' | 'allow' | 'deny' | Limiter<any>;
  /** The longest a store call may take, in ms, before `onStoreError` applies. @default 1_000 */
  storeTimeoutMs?: number;
  /** Receives store failures handled by `onStoreError`, and failures of background work. @default console.error */
  onError?: (error: RateKitError) => void;
  /** The clock, Unix epoch ms. @default Date.now */
  now?: () => number;
  /** Refusals answered in-process on a shared store (core's `refusalCache`). @default on, 10 000 keys, with a shared store */
  refusalCache?: boolean | { maxKeys?: number };
}

/** What the per-request path needs, checked once. */
export interface ResolvedOptions<TContext extends Context> {
  readonly limits: LimitsOption<TContext>;
  readonly keyOf: (c: TContext) => KeyResult | Promise<KeyResult>;
  readonly keyLabel: string;
  readonly headerOptions: Readonly<HeaderOptions>;
  readonly anyHeaders: boolean;
  readonly listHeaders: boolean;
  readonly needsContext: boolean;
  readonly statusCode: number;
  readonly requestPropertyName: string;
}

const KNOWN = new Set<string>([
  'limit',
  'windowMs',
  'algorithm',
  'limits',
  'cost',
  'keyGenerator',
  'getConnInfo',
  'trustProxy',
  'ipv6Subnet',
  'skip',
  'standardHeaders',
  'legacyHeaders',
  'statusCode',
  'message',
  'handler',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'requestWasSuccessful',
  'requestPropertyName',
  'onDecision',
  'store',
  'prefix',
  'onStoreError',
  'storeTimeoutMs',
  'onError',
  'now',
  'refusalCache',
]);

/** Names users of other limiters may pass, and ours. */
const RENAMED: Record<string, string> = {
  max: 'limit',
  duration: 'windowMs',
  id: 'keyGenerator',
  requestStorePropertyName: 'requestPropertyName (the limiter is on the middleware: `.limiter`)',
  binding: 'store',
};

/**
 * Checks the options of {@link rateLimit} and resolves the defaults.
 * Internal: exported for its test.
 *
 * @throws {RateKitOptionError} naming the first bad option.
 */
export function resolveOptions<TContext extends Context>(options: RateLimitOptions<TContext>): ResolvedOptions<TContext> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass anything
  if (typeof options !== 'object' || options === null) throw new RateKitOptionError('options', 'an object', options);
  for (const name of Object.keys(options)) {
    if (KNOWN.has(name) || (options as Record<string, unknown>)[name] === undefined) continue;
    const hint = RENAMED[name] === undefined ? '' : ` (did you mean \`${RENAMED[name]}\`?)`;
    throw new RateKitOptionError(name, `unset: rateLimit() has no such option${hint}`, (options as Record<string, unknown>)[name]);
  }
  for (const name of ['keyGenerator', 'getConnInfo', 'skip', 'handler', 'requestWasSuccessful', 'onDecision'] as const) {
    if (options[name] !== undefined) assertFunction(name, options[name]);
  }
  for (const name of ['legacyHeaders', 'skipFailedRequests', 'skipSuccessfulRequests'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new RateKitOptionError(name, 'a boolean', options[name]);
  }
  const statusCode = options.statusCode ?? 429;
  assertInteger('statusCode', statusCode, 400);
  if (statusCode > 599) throw new RateKitOptionError('statusCode', 'an integer from 400 to 599', statusCode);
  const message = options.message;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input
  if (message !== undefined && (message === null || !['string', 'object', 'function'].includes(typeof message))) {
    throw new RateKitOptionError('message', 'a string, an object or a function', message);
  }
  const requestPropertyName = options.requestPropertyName ?? 'rateLimit';
  if (typeof requestPropertyName !== 'string' || requestPropertyName === '') throw new RateKitOptionError('requestPropertyName', 'a non-empty string', requestPropertyName);

  const headerOptions = resolveHeaderOptions({
    standardHeaders: options.standardHeaders ?? 'draft-6',
    legacyHeaders: options.legacyHeaders ?? false,
    // Retry-After on every refusal, as hono-rate-limiter sends it.
    retryAfter: true,
    combineLists: true,
  });
  const standard = headerOptions.standardHeaders;

  return {
    limits: resolveLimits(options),
    ...resolveKey(options),
    headerOptions,
    anyHeaders: headerOptions.legacyHeaders || standard !== false,
    listHeaders: standard !== false && standard !== 'draft-6' && standard !== 'draft-7',
    needsContext: typeof options.limits === 'function' || typeof options.cost === 'function',
    statusCode,
    requestPropertyName,
  };
}

/** `limits`, or one limit of `limit` per `windowMs` with `algorithm`. */
function resolveLimits<TContext extends Context>(options: RateLimitOptions<TContext>): LimitsOption<TContext> {
  if (options.limits !== undefined) {
    for (const name of ['limit', 'windowMs', 'algorithm'] as const) {
      if (options[name] !== undefined) throw new RateKitOptionError(name, 'unset when `limits` is given (put it in the limits)', options[name]);
    }
    return options.limits;
  }
  const limit = options.limit ?? 5;
  assertInteger('limit', limit, 1);
  const windowMs = options.windowMs ?? 60_000;
  assertPositive('windowMs', windowMs, ' of milliseconds');
  const algorithm = options.algorithm ?? 'fixed-window';
  assertOneOf('algorithm', algorithm, ALGORITHMS);
  const one: LimitOptions = { algorithm, limit, windowMs };
  return one;
}

/** `keyGenerator`, or the client address from `getConnInfo`, `trustProxy` and `ipv6Subnet`. */
function resolveKey<TContext extends Context>(options: RateLimitOptions<TContext>): Pick<ResolvedOptions<TContext>, 'keyOf' | 'keyLabel'> {
  const { keyGenerator, getConnInfo } = options;
  const trustProxy = options.trustProxy ?? false;
  if (trustProxy !== false && typeof trustProxy !== 'function') {
    if (typeof trustProxy !== 'number' || !Number.isInteger(trustProxy) || trustProxy < 0) {
      throw new RateKitOptionError('trustProxy', 'false, a number of proxy hops (an integer ≥ 0) or a function (address, hop) => boolean (true would let any client choose its key)', trustProxy);
    }
  }
  const ipv6Subnet = options.ipv6Subnet ?? 56;
  if (ipv6Subnet !== false && (typeof ipv6Subnet !== 'number' || !Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128)) {
    throw new RateKitOptionError('ipv6Subnet', 'an integer from 1 to 128, or false', ipv6Subnet);
  }
  if (keyGenerator !== undefined) {
    for (const name of ['getConnInfo', 'trustProxy', 'ipv6Subnet'] as const) {
      if (options[name] !== undefined) throw new RateKitOptionError(name, 'unset when `keyGenerator` is given (they shape the default key only; use ipKeyGenerator in yours)', options[name]);
    }
    return { keyOf: keyGenerator, keyLabel: '`keyGenerator(c)`' };
  }
  if (getConnInfo === undefined) {
    throw new RateKitOptionError(
      'getConnInfo',
      "Hono's getConnInfo for your runtime (from 'hono/bun', 'hono/deno', 'hono/cloudflare-workers' or '@hono/node-server/conninfo'), or a `keyGenerator`",
      getConnInfo,
    );
  }
  return { keyOf: clientKeyOf(getConnInfo, trustProxy, ipv6Subnet) as (c: TContext) => string, keyLabel: 'the default key (`getConnInfo(c)`)' };
}
