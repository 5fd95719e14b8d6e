/**
 * @fastify/rate-limit 11's option names and result shapes, as both modes take and give them: the
 * options ratekit mode reads in `../ratekit-options.ts`, and `createRateLimit()`'s check and result.
 *
 * @module
 */
import type { Decision } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import type { RateLimitOptions, ValueOrPromise } from '../types.js';
import type { FastifyRateLimitStoreCtor } from './store-contract.js';

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

/**
 * Header names that `addHeaders` / `addHeadersOnExceeding` can switch off, in
 * lower case. Which of them are sent depends on the header format
 * (`legacyHeaders`, `standardHeaders` or `enableDraftSpec`); naming a header
 * the active format does not send is an option error.
 */
export type RateLimitHeaderName =
  'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset' | 'ratelimit-limit' | 'ratelimit-remaining' | 'ratelimit-reset' | 'ratelimit-policy' | 'ratelimit' | 'retry-after';

/** @fastify/rate-limit 11's options of a limiter (a route's, `rateLimit()`'s, `createRateLimit()`'s, the plugin's). */
export interface FastifyRateLimitNames {
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
  /** Called on every refusal that is a ban (403). Not awaited. */
  onBanReach?: (request: FastifyRequest, key: string) => void;
  /** Let requests through when the store fails: the same as `onStoreError: 'allow'`. @default false */
  skipOnError?: boolean;
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

/** @fastify/rate-limit 11's options of the plugin itself. */
export interface FastifyRateLimitPluginNames {
  /**
   * Apply the plugin's limiter to every route declared after it (in its scope
   * and child scopes) that has no `config.rateLimit`. These routes share one
   * count per key. With `false`, only routes with `config.rateLimit` or a
   * `fastify.rateLimit()` hook are limited.
   * @default true
   */
  global?: boolean;
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
