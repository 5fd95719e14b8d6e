/**
 * The options of ratekit mode and of the @fastify/rate-limit imitation, as one type: core's
 * (`GateOptions`, documented once there, where `limit`/`windowMs` are `max`/`timeWindow` here),
 * Fastify's, and @fastify/rate-limit 11's names (`compat/types.ts`).
 *
 * @module
 */
import type { Decision, GateOptions, RateLimitStore, StandardHeaders } from '@ratekit/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { FastifyRateLimitNames, FastifyRateLimitPluginNames } from './compat/types.js';
import type { FastifyRateLimitStoreCtor } from './compat/store-contract.js';

/** A value, or a promise of it. Synchronous answers keep the request path free of `await`. */
export type ValueOrPromise<T> = T | PromiseLike<T>;

/** The lifecycle stage a limiter runs at. Use `preHandler` when the key depends on authentication done earlier. */
export type RateLimitHook = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler';

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
 * Options shared by the plugin, a route's `config.rateLimit`, `fastify.rateLimit(options)` and
 * `fastify.createRateLimit(options)`. A registration given only @fastify/rate-limit 11's options
 * behaves as @fastify/rate-limit 11; one given any ratekit option (`algorithm`, `limits`, `cost`,
 * `standardHeaders`, `legacyHeaders`, `onStoreError`, `now`, `refusalCache`, or a ratekit `store`)
 * runs on @ratekit/core's gate, with coded option errors. A route's options are merged over the
 * plugin's one at a time; `limits` and `max`/`timeWindow`/`algorithm`, `enableDraftSpec` and
 * `standardHeaders`/`legacyHeaders`, `skipOnError` and `onStoreError` replace each other.
 */
export interface RateLimitOptions extends FastifyRateLimitNames, Pick<GateOptions<FastifyRequest>, 'algorithm' | 'limits' | 'cost' | 'ipv6Subnet' | 'onStoreError' | 'storeTimeoutMs'> {
  /**
   * The client's identity. Return a non-empty string (a number is turned
   * into a string), or, in ratekit mode, `false` to let the request through
   * unlimited. A generator that throws, rejects or returns nothing
   * fails that request with a `RateKitError` (code `ERR_RATEKIT_KEY`, status
   * 500) through the app's error handler; other requests are unaffected.
   * @default `request.ip` (which honours Fastify's `trustProxy`) through core's `ipKeyGenerator`
   */
  keyGenerator?: (request: FastifyRequest) => ValueOrPromise<string | number | false>;
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
}

/** Options of the plugin itself: {@link RateLimitOptions} plus the registration-only ones. */
export interface RateLimitPluginOptions extends RateLimitOptions, FastifyRateLimitPluginNames, Pick<GateOptions<FastifyRequest>, 'now' | 'refusalCache'> {
  /**
   * The store every limiter of this registration uses: a ratekit store (for
   * example `redisStore()` from @ratekit/redis; ratekit mode), or a
   * @fastify/rate-limit store class (`new Store(options)`, with
   * `incr(key, callback, timeWindow, max)` and `child(routeOptions)`).
   * @default a memory store of `cache` keys
   */
  store?: RateLimitStore | FastifyRateLimitStoreCtor;
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

export type { AllowListedResult, CheckOptions, CheckResult, CreateRateLimitOptions, LimitedResult, RateLimitChecker, RateLimitHeaderName } from './compat/types.js';
