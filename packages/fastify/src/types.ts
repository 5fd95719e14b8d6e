import type { AlgorithmName, Decision, Limiter, LimitOptions, RateLimitStore, StandardHeaders } from '@ratekit/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { FastifyRateLimitStoreCtor } from './compat/store-contract.js';

/**
 * The options of `fastify.createRateLimit()`, as @fastify/rate-limit 11
 * names them: {@link RateLimitOptions}, plus the `store` class its types
 * allow there.
 */
export interface CreateRateLimitOptions extends RateLimitOptions {
  /**
   * Accepted for @fastify/rate-limit 11's types. In a @fastify/rate-limit
   * registration it is ignored, as there: the check counts in the
   * registration's store (its `child()`). In ratekit mode it is an option
   * error (`RateKitOptionError`): the store is set when the plugin is registered.
   */
  store?: FastifyRateLimitStoreCtor;
}

/** A value, or a promise of it. Synchronous answers keep the request path free of `await`. */
export type ValueOrPromise<T> = T | PromiseLike<T>;

/** The lifecycle stage a limiter runs at. Use `preHandler` when the key depends on authentication done earlier. */
export type RateLimitHook = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler';

/**
 * Header names that `addHeaders` / `addHeadersOnExceeding` can switch off, in
 * lower case. Which of them are sent depends on the header format
 * (`legacyHeaders`, `standardHeaders` or `enableDraftSpec`); naming a header
 * the active format does not send is an option error.
 */
export type RateLimitHeaderName =
  'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'ratelimit-limit' | 'ratelimit-remaining' | 'ratelimit-reset' | 'ratelimit-policy' | 'ratelimit' | 'retry-after';

/** What `errorResponseBuilder` is told about a refusal. Field names follow @fastify/rate-limit 11. */
export interface ErrorResponseBuilderContext {
  /** 429, or 403 once `ban` is exceeded. */
  statusCode: 429 | 403;
  /** True when the refusal is a ban (403). */
  ban: boolean;
  /** The binding limit's capacity (for `max`/`timeWindow`, the `max`). */
  max: number;
  /** Ms until the request could pass, as sent in `Retry-After` (whole seconds, at least 1). */
  ttl: number;
  /** `Retry-After` as words, e.g. `1 minute`, `10 seconds`. */
  after: string;
  /** The key the request was counted under. */
  key: string;
  /** The whole decision from @ratekit/core. */
  decision: Decision;
}

/**
 * Options shared by the plugin, a route's `config.rateLimit`, `fastify.rateLimit(options)`
 * and `fastify.createRateLimit(options)`. Names and defaults follow
 * @fastify/rate-limit 11 where they exist there; the rest (`algorithm`,
 * `limits`, `cost`, the header format, `store` errors) are ratekit's.
 *
 * Two modes. A registration given only @fastify/rate-limit 11's options
 * behaves exactly as @fastify/rate-limit 11 (its fallbacks for bad values,
 * its stores, its 429 body; see docs/migrating/fastify-rate-limit.md). A
 * registration given any ratekit option (`algorithm`, `limits`, `cost`,
 * `standardHeaders`, `legacyHeaders`, `onStoreError`, `storeTimeoutMs`,
 * `now`, or a ratekit `store`) runs on @ratekit/core, and what is described
 * below as ratekit's behaviour applies (validation with coded errors, a
 * shared `groupId` count, refusals that charge nothing).
 *
 * A route's options are merged over the plugin's, one option at a time, with
 * related options replaced together: a route giving `limits` drops the
 * plugin's `max`/`timeWindow`/`algorithm` and the other way round; a route
 * giving `standardHeaders`/`legacyHeaders` drops the plugin's
 * `enableDraftSpec` and the other way round; `skipOnError` and
 * `onStoreError` likewise.
 */
export interface RateLimitOptions {
  /**
   * Requests (units, at the default cost of 1) a key may spend per
   * `timeWindow`: an integer ≥ 1, or a function of the request and key
   * returning one (it may be async). A key whose `max` changes starts a new
   * count under the new value. Leave unset when `limits` is given.
   * @default 1000
   */
  max?: number | ((request: FastifyRequest, key: string) => ValueOrPromise<number>);
  /**
   * The window of the limit built from `max`: milliseconds, or a duration
   * string such as `'1 minute'`, `'10s'`, `'1.5h'` (parsed by `@lukeed/ms`,
   * as @fastify/rate-limit does). Leave unset when `limits` is given.
   * @default 60_000
   */
  timeWindow?: number | string | ((request: FastifyRequest, key: string) => ValueOrPromise<number>);
  /**
   * @fastify/rate-limit's exponential backoff: each hit over `max` restarts
   * the window, `timeWindow × 2^(hits − max − 1)` long. Only without ratekit
   * options (in ratekit mode use `algorithm: 'delay'` or `continueExceeding`).
   * @default false
   */
  exponentialBackoff?: boolean;
  /**
   * The algorithm of the limit built from `max` and `timeWindow`. The
   * default matches @fastify/rate-limit: a fixed window that starts at a
   * key's first request.
   * @default 'fixed-window'
   */
  algorithm?: AlgorithmName;
  /**
   * The whole policy instead of `max`/`timeWindow`/`algorithm`: one limit,
   * several limits checked all-or-nothing (if one refuses, none is charged),
   * or a function of the request choosing them (per plan, per method). A
   * function should return the same objects each time, so they are
   * validated once.
   * @example `[{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, { limit: 500, windowMs: 3_600_000, name: 'hour' }]`
   */
  limits?: LimitOptions | readonly LimitOptions[] | ((request: FastifyRequest) => LimitOptions | readonly LimitOptions[]);
  /** What a request costs, or a function of the request returning it (a finite number ≥ 0). @default 1 */
  cost?: number | ((request: FastifyRequest) => number);
  /**
   * The client's identity. Return a non-empty string (a number is turned
   * into a string). A generator that throws, rejects or returns nothing
   * fails that request with a `RateKitError` (code `ERR_RATEKIT_KEY`, status
   * 500) through the app's error handler; other requests are unaffected.
   * @default `request.ip` (which honours Fastify's `trustProxy`) through core's `ipKeyGenerator`
   */
  keyGenerator?: (request: FastifyRequest) => ValueOrPromise<string | number>;
  /** Prefix length IPv6 client addresses are grouped by in the default key; `false` keeps them whole. @default 56 */
  ipv6Subnet?: number | false;
  /**
   * Keys that are never limited (no headers, no count), or a function of the
   * request and key deciding it (it may be async). The array is matched
   * against the key itself, not the key with `groupId` appended.
   */
  allowList?: readonly string[] | ((request: FastifyRequest, key: string) => ValueOrPromise<boolean>);
  /**
   * Routes (or `rateLimit()` hooks) with the same `groupId` share one count
   * per key. Unlike @fastify/rate-limit 11 (issue #463), they really do: the
   * group is the counter's namespace. Routes of a group must configure the
   * same limits; a mismatch is an option error when the route is declared.
   */
  groupId?: string;
  /** The lifecycle stage the limiter runs at. @default 'onRequest' */
  hook?: RateLimitHook;
  /**
   * Builds what is thrown on a refusal; it reaches the app's `setErrorHandler`.
   * Return an `Error` or a plain object. When it carries no `statusCode`,
   * 429 (403 for a ban) is set on it (on a copy, for a plain object), so a
   * builder that forgets it still answers 429, not 500.
   * @default an `Error` with `statusCode` and core's `DEFAULT_REFUSAL_MESSAGE`
   */
  errorResponseBuilder?: (request: FastifyRequest, context: ErrorResponseBuilderContext) => object;
  /** Headers to leave out of refusals (`false`). Keys must be headers the active format sends, plus `retry-after`. */
  addHeaders?: Partial<Record<RateLimitHeaderName, boolean>>;
  /** Headers to leave out of admitted responses (`false`). Keys must be headers the active format sends. */
  addHeadersOnExceeding?: Partial<Record<RateLimitHeaderName, boolean>>;
  /**
   * @fastify/rate-limit's switch to the `RateLimit-Limit`/`-Remaining`/`-Reset`
   * fields: the same as `standardHeaders: 'draft-6', legacyHeaders: false`
   * (draft-6 adds `RateLimit-Policy`).
   * @default false
   */
  enableDraftSpec?: boolean;
  /**
   * IETF RateLimit fields: `'draft-6'`, `'draft-7'`, `'draft-8'` (to `'draft-11'`,
   * same bytes), or `false`; `true` means `'draft-6'`, as in express-rate-limit.
   * Written by core's header module.
   * @default false
   */
  standardHeaders?: StandardHeaders | true;
  /**
   * The legacy `X-RateLimit-Limit`/`-Remaining`/`-Reset` fields, with the reset
   * in seconds from now as @fastify/rate-limit sends it.
   * @default true, unless `standardHeaders` or `enableDraftSpec` is set
   */
  legacyHeaders?: boolean;
  /** Called on every admitted request (the @fastify/rate-limit name). Not awaited. */
  onExceeding?: (request: FastifyRequest, key: string) => void;
  /** Called on every refused request, before the error is built. Not awaited. */
  onExceeded?: (request: FastifyRequest, key: string) => void;
  /** Called on every refusal that is a ban (403). Not awaited. */
  onBanReach?: (request: FastifyRequest, key: string) => void;
  /** Let requests through when the store fails: the same as `onStoreError: 'allow'`. @default false */
  skipOnError?: boolean;
  /**
   * What a failing or timed-out store call turns into: `'throw'` (the error
   * reaches the app's error handler, 500), `'allow'`, `'deny'`, or a fallback
   * limiter. Failures handled by `'allow'`/`'deny'`/a fallback are logged with
   * `fastify.log.error`.
   * @default 'throw'
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the fallback limiter gets the caller's context, whatever its type (Limiter is invariant in it)
  onStoreError?: 'throw' | 'allow' | 'deny' | Limiter<any>;
  /** The longest a store call may take, in ms, before it counts as failed. @default 1_000 */
  storeTimeoutMs?: number;
  /**
   * After this many refusals of a key within the binding limit's window,
   * answer 403 instead of 429. `0`: the first refusal is already a ban; `-1`
   * (or unset): never.
   * @default -1
   */
  ban?: number;
  /**
   * Each request made while refused restarts the key from an exhausted
   * state, so a client that keeps hammering stays blocked (for a fixed
   * window: a full window from its last attempt). Needs a policy of one
   * limit (`max`/`timeWindow`, or `limits` with one limit, not a function).
   * @default false
   */
  continueExceeding?: boolean;
}

/** Options of the plugin itself: {@link RateLimitOptions} plus the registration-only ones. */
export interface RateLimitPluginOptions extends RateLimitOptions {
  /**
   * Apply the plugin's limiter to every route declared after it (in its scope
   * and child scopes) that has no `config.rateLimit`. These routes share one
   * count per key. With `false`, only routes with `config.rateLimit` or a
   * `fastify.rateLimit()` hook are limited.
   * @default true
   */
  global?: boolean;
  /**
   * The store every limiter of this registration uses: a ratekit store (for
   * example `redisStore()` from @ratekit/redis; ratekit mode), or a
   * @fastify/rate-limit store class (`new Store(options)`, with
   * `incr(key, callback, timeWindow, max)` and `child(routeOptions)`).
   * @default a memory store of `cache` keys
   */
  store?: RateLimitStore | FastifyRateLimitStoreCtor;
  /**
   * An ioredis client: limit on Redis with @fastify/rate-limit 11's own
   * script, keys (`<nameSpace><key>`, `<nameSpace><method><url>-<key>` for a
   * route's own limit) and counting, so old and new instances share counts
   * during a rolling deploy. Not with ratekit options (pass a ratekit `store`).
   */
  redis?: unknown;
  /** Keys held by the default memory store (least recently used evicted first). @default 5_000 as @fastify/rate-limit */
  cache?: number;
  /**
   * Prefix of every namespace in the store, so registrations sharing a remote
   * store keep separate counts.
   * @default 'fastify-rate-limit-'
   */
  nameSpace?: string;
  /** The clock, Unix epoch ms. Inject a fixed clock in tests. @default Date.now */
  now?: () => number;
  /**
   * ratekit mode: refusals answered in-process on a shared store (core's
   * `refusalCache` option of `createLimiter`, for every limiter of this
   * registration): `false` sends every request to the store.
   * @default `{ maxKeys: 10_000 }` per limiter with a shared store
   */
  refusalCache?: boolean | { maxKeys?: number };
}

/**
 * The hook returned by `fastify.rateLimit()`: use it as a route's (or
 * `setNotFoundHandler`'s) `onRequest`, `preValidation` or `preHandler` (it
 * also works as `preParsing`). Called with a `done` callback (as Fastify
 * calls it), an in-memory decision needs no promise; called without one
 * (`hook.call(fastify, request, reply)`, @fastify/rate-limit's async hook),
 * it returns a promise that rejects with the refusal.
 */
export interface RateLimitHookHandler {
  (this: unknown, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void;
  (this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/** Options of a manual check. */
export interface CheckOptions {
  /** `false` peeks: what a counted request would get, charging nothing. @default true */
  increment?: boolean;
}

/** The result of a manual check when the key is on the allow list (nothing counted). */
export interface AllowListedResult {
  isAllowed: true;
  key: string;
}

/** The result of a manual check. Field names follow @fastify/rate-limit 11's `createRateLimit()`. */
export interface LimitedResult {
  /** False: the key is not on the allow list (read `isExceeded` for the verdict). */
  isAllowed: false;
  key: string;
  /** The binding limit's capacity. */
  max: number;
  /** The binding limit's window, in ms. */
  timeWindow: number;
  /** Whole units left on the binding limit. */
  remaining: number;
  /** Ms until the binding limit is back to full capacity. */
  ttl: number;
  /** `ttl` in whole seconds, rounded up. */
  ttlInSeconds: number;
  /** True when the request is (or, peeking, would be) refused. */
  isExceeded: boolean;
  /** True when the refusal is (or would be) a ban. */
  isBanned: boolean;
  /** The whole decision from @ratekit/core. */
  decision: Decision;
}

/**
 * What `fastify.createRateLimit()`'s check resolves to, field for field as
 * @fastify/rate-limit 11 declares it. In ratekit mode the counted result also
 * carries `decision` ({@link LimitedResult}).
 */
export type CheckResult =
  | { isAllowed: true; key: string }
  | {
      isAllowed: false;
      key: string;
      max: number;
      timeWindow: number;
      remaining: number;
      ttl: number;
      ttlInSeconds: number;
      isExceeded: boolean;
      isBanned: boolean;
    };

/** A manual check, from `fastify.createRateLimit()`. It sets no headers and throws nothing on a refusal. */
export type RateLimitChecker = (request: FastifyRequest, options?: CheckOptions) => Promise<AllowListedResult | LimitedResult>;
