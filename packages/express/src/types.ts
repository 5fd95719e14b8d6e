import type { AlgorithmName, Decision, Limiter, LimitsOption, RateKitError, RateLimitStore, StoreErrorPolicy } from '@ratekit/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { VALIDATION_NAMES } from './validation-names.js';

/** A value, or a promise of it. Synchronous answers keep the request path free of `await`. */
export type ValueOrPromise<T> = T | Promise<T>;

/**
 * A function of the request that decides a value, possibly asynchronously
 * (express-rate-limit's name): `limit`, `message`, `identifier`, `skip`,
 * `keyGenerator`, `requestWasSuccessful`, `retryAfter`, `ipv6Subnet`.
 */
export type ValueDeterminingMiddleware<T> = (request: Request, response: Response) => T | Promise<T>;

/** Logs one error or warning, with an optional message (express-rate-limit's `LoggerFn`). */
export type LoggerFn = (error: unknown, message?: string) => void;

/**
 * Where configuration checks and handled store errors are logged. The
 * default writes to the console, message first (as express-rate-limit's does).
 */
export interface Logger {
  error: LoggerFn;
  warn: LoggerFn;
}

/** The callback of a legacy store's `incr` (express-rate-limit ≤ 5 stores). */
export type IncrementCallback = (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void;

/**
 * Answers a refused request. Called on every refusal, after the headers are
 * set and `req.rateLimit` is filled. A thrown error or rejected promise goes
 * to `next(err)`.
 */
export type RateLimitExceededEventHandler = (request: Request, response: Response, next: NextFunction, optionsUsed: Options) => unknown;

/** @deprecated express-rate-limit's removed `onLimitReached` callback; accepted, logged, never called. */
export type RateLimitReachedEventHandler = (request: Request, response: Response, optionsUsed: Options) => void;

/** What a store answers for a key: its hits in the current window and when the window ends. */
export interface ClientRateLimitInfo {
  /** Hits counted in the current window, this one included. */
  totalHits: number;
  /** When the window ends; `undefined` when the store cannot tell. */
  resetTime: Date | undefined;
}

/** What `Store.increment` returns. */
export type IncrementResponse = ClientRateLimitInfo;

/** A client record with a known reset time (express-rate-limit's `Client`). */
export interface Client {
  totalHits: number;
  resetTime: Date;
}

/**
 * express-rate-limit's store contract (v7/v8): a per-key hit counter with a
 * window. Any store written for express-rate-limit (rate-limit-redis,
 * rate-limit-memcached, @acpr/rate-limit-postgresql,
 * @express-rate-limit/cluster-memory-store, …) plugs in unchanged, and so do
 * {@link MemoryStore} and {@link RateKitStore} from this package.
 *
 * Methods may answer synchronously or with a promise. (Declared as methods,
 * so stores typed against express-rate-limit's own `Options` type-check here.)
 */
export interface Store {
  /** Called once, synchronously, when the limiter is built, with its resolved options (`windowMs` among them). Not awaited; failures are logged. */
  init?(options: Options): void | Promise<void>;
  /** The key's hits and reset time, or `undefined` for an unknown key. Backs `getKey`. */
  get?(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
  /** Counts one hit. */
  increment(key: string): Promise<IncrementResponse> | IncrementResponse;
  /** Takes one hit back (for `skipFailedRequests` / `skipSuccessfulRequests`). */
  decrement(key: string): Promise<void> | void;
  /** Forgets a key. */
  resetKey(key: string): Promise<void> | void;
  /** Forgets every key. Never called by the middleware. */
  resetAll?(): Promise<void> | void;
  /** Stops timers and releases connections. */
  shutdown?(): Promise<void> | void;
  /** True when two instances can never share counts (an in-process store). */
  localKeys?: boolean;
  /** The text the store puts before keys; keeps limiters with distinct prefixes apart in the double-count check. */
  prefix?: string;
}

/** The callback-style store of express-rate-limit ≤ 5: `incr` instead of `increment`. Wrapped in a promise adapter. */
export interface LegacyStore {
  incr(key: string, callback: IncrementCallback): void;
  decrement(key: string): void;
  resetKey(key: string): void;
  resetAll?(): void;
}

/** The IETF RateLimit header drafts express-rate-limit knows. */
export type DraftHeadersVersion = 'draft-6' | 'draft-7' | 'draft-8';

/** Every draft `standardHeaders` accepts: express-rate-limit's, and `draft-9` to `draft-11` (the same wire format as `draft-8`). */
export type StandardHeadersVersion = DraftHeadersVersion | 'draft-9' | 'draft-10' | 'draft-11';

/** The name of one configuration check (see `validate`). */
export type ValidationName = (typeof VALIDATION_NAMES)[number];

/** Which checks run: a name set to `false` turns that check off; `default` covers the others. */
export type EnabledValidations = { [K in ValidationName | 'default']?: boolean };

/**
 * The options of {@link rateLimit}: express-rate-limit v8's, with the same
 * names, defaults and meanings, plus ratekit's own (`algorithm`, `limits`,
 * `cost`, `prefix`, `onStoreError`, `storeTimeoutMs`, `onError`, `now`).
 * `rateLimit()` takes any subset.
 *
 * **Two modes.** With only express-rate-limit options, or an
 * express-rate-limit `store`, the limiter behaves as express-rate-limit: it
 * counts every request, refused ones included, and refuses when the count
 * exceeds `limit`. With any ratekit option, or a ratekit
 * `RateLimitStore` as `store`, it is a ratekit limiter: the algorithm
 * decides, several limits and costs are possible, and a refusal charges
 * nothing. See the README's "Two modes".
 */
export interface Options {
  /** The window, in ms. @default 60_000 */
  windowMs: number;
  /**
   * Requests allowed per window and key; a request is refused when its count
   * exceeds it. express-rate-limit mode also takes a function of the request
   * (evaluated after counting). `0` refuses everything.
   * @default 5
   */
  limit: number | ValueDeterminingMiddleware<number>;
  /** The default handler's body: a string, an object (JSON), a Buffer, or a function of the request returning one. @default 'Too many requests, please try again later.' */
  message: unknown;
  /** The default handler's status. @default 429 */
  statusCode: number;
  /** `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix epoch seconds), plus `Date`. @default true */
  legacyHeaders: boolean;
  /**
   * The IETF RateLimit fields: `'draft-6'` (`true`), `'draft-7'`, `'draft-8'`
   * (`'draft-9'` to `'draft-11'`, accepted by {@link RateLimitOptions}, send
   * the same bytes as `'draft-8'`), or `false`.
   * @default false
   */
  standardHeaders: boolean | DraftHeadersVersion;
  /** draft-8: the policy name, or a function of the request returning it. Refused in ratekit mode: set `name` on each limit of `limits`. @default `<limit>-in-<window>`, e.g. `100-in-15min` */
  identifier: string | ValueDeterminingMiddleware<string>;
  /** Overrides the `Retry-After` value (whole seconds) of a refusal; advisory only. Refused in ratekit mode. @default seconds until the window resets */
  retryAfter?: number | ValueDeterminingMiddleware<number>;
  /** Where the {@link RateLimitInfo} goes on `req`. @default 'rateLimit' */
  requestPropertyName: string;
  /** Un-counts requests whose response failed (status ≥ 400 by default), errored or whose connection closed first. @default false */
  skipFailedRequests: boolean;
  /** Un-counts requests whose response succeeded (status < 400 by default). @default false */
  skipSuccessfulRequests: boolean;
  /** The key a request is counted under. @default the client IP, `ipKeyGenerator(req.ip, ipv6Subnet)` */
  keyGenerator: ValueDeterminingMiddleware<string>;
  /** The default key groups IPv6 clients by this prefix length (1–128; 32–64 advised), a function of the request returning it (not in ratekit mode), or `false` for whole addresses. @default 56 */
  ipv6Subnet: number | ValueDeterminingMiddleware<number> | false;
  /** Answers refused requests. @default sets `statusCode` and sends `message` */
  handler: RateLimitExceededEventHandler;
  /** Requests for which this returns true are not counted, get no headers and no `req.rateLimit`. @default never */
  skip: ValueDeterminingMiddleware<boolean>;
  /** Whether a finished response counts as successful, for the two skip options. @default `res.statusCode < 400` */
  requestWasSuccessful: ValueDeterminingMiddleware<boolean>;
  /**
   * Where the counts live: an express-rate-limit {@link Store} (or a legacy
   * `incr` store); {@link RateLimitOptions} also takes a ratekit
   * `RateLimitStore` (ratekit mode).
   * @default a new {@link MemoryStore} (express-rate-limit mode) or in-memory `RateLimitStore` (ratekit mode) per limiter
   */
  store: Store | LegacyStore;
  /** Turns the configuration checks on or off, all (`true`/`false`) or by name. Refused in ratekit mode, which runs none. @default true */
  validate: boolean | EnabledValidations;
  /** @deprecated express-rate-limit ≤ 5's name of `legacyHeaders` (refused in ratekit mode). */
  headers?: boolean;
  /** @deprecated express-rate-limit ≤ 6's name of `limit` (refused in ratekit mode). */
  max?: number | ValueDeterminingMiddleware<number>;
  /** When the store fails: `false` passes the error to `next(err)`, `true` logs it and lets the request through unlimited. Refused in ratekit mode (`onStoreError`). @default false */
  passOnStoreError: boolean;
  /** Where checks and handled errors are logged. @default the console */
  logger: Logger;

  // ratekit's own options: any of them selects ratekit mode.

  /** ratekit mode: the algorithm of the limit built from `windowMs` and `limit`. @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /**
   * ratekit mode: the policy instead of `windowMs`/`limit`/`algorithm`: one
   * limit, several checked all-or-nothing, or a function of the request
   * returning them (return the same objects each time: they are validated once).
   */
  limits?: LimitsOption<Request>;
  /** ratekit mode: the cost of a request, or a function of the request returning it (≥ 0). @default 1 */
  cost?: number | ((req: Request) => number);
  /** ratekit mode: this limiter's namespace in a shared ratekit store. @default '' */
  prefix?: string;
  /** ratekit mode: what a failing store turns into: `'throw'` (`next(err)`), `'allow'`, `'deny'`, or a fallback limiter. @default 'throw' */
  onStoreError?: StoreErrorPolicy;
  /** ratekit mode: the longest an asynchronous store call may take, in ms. @default 1_000 */
  storeTimeoutMs?: number;
  /** ratekit mode: refusals answered in-process on a shared store (core's `refusalCache`); `false` sends every request to the store. @default `{ maxKeys: 10_000 }` with a shared store */
  refusalCache?: boolean | { maxKeys?: number };
  /** ratekit mode: receives store failures handled by `onStoreError` and failed refunds. @default `logger.error` */
  onError?: (error: RateKitError) => void;
  /** ratekit mode: called with every decision (metrics, logs); a Promise it returns is awaited before the request goes on, and its failure goes to `onError`. Does not select the mode. */
  onDecision?: (decision: Decision, req: Request, key: string) => void | Promise<void>;
  /** The clock, Unix epoch ms; inject a fixed one in tests. Neutral: does not select a mode. @default `Date.now()` */
  now?: () => number;
}

/**
 * What `rateLimit()` accepts: any subset of {@link Options}, with
 * `standardHeaders` also `'draft-9'` to `'draft-11'` and `store` also a
 * ratekit `RateLimitStore`. (`Options` itself keeps express-rate-limit's
 * types, so handlers and stores typed against either package fit both.)
 */
export type RateLimitOptions = Partial<Omit<Options, 'standardHeaders' | 'store'>> & {
  standardHeaders?: boolean | StandardHeadersVersion;
  store?: Store | LegacyStore | RateLimitStore;
};

/** Which counting rules a limiter follows. See {@link Options}. */
export type RateLimitMode = 'express-rate-limit' | 'ratekit';

/**
 * The resolved options, as `handler` and `Store.init` receive them: every
 * default filled in, `standardHeaders` normalised (`true` → `'draft-6'`), the
 * store wrapped when it is a legacy one, `validate` the live map of checks.
 * In ratekit mode, `handler` gets the options as given, frozen, with
 * `statusCode` and `message` resolved. Typed as express-rate-limit's
 * `Options`; at run time `standardHeaders` may also be `'draft-9'`…`'draft-11'`
 * and, in ratekit mode, `store` a `RateLimitStore`, when that is what was given.
 */
export type ResolvedRateLimitOptions = Readonly<Options> & {
  /** Which counting rules the limiter follows. */
  readonly mode: RateLimitMode;
  /** ratekit mode: the core limiter (`peek`, `store`, `limitsFor(req)`); `undefined` in express-rate-limit mode. */
  readonly limiter: Limiter<Request> | undefined;
};

/**
 * What the middleware puts on `req[requestPropertyName]` (default
 * `req.rateLimit`) for every request it counts, refused ones included.
 * express-rate-limit v8's shape, with a hidden `current` equal to `used`.
 *
 * @example
 * ```ts
 * app.get('/quota', limiter, (req, res) => res.json(req.rateLimit));
 * // {"limit":5,"used":1,"remaining":4,"resetTime":"2026-11-21T12:01:00.000Z","key":"127.0.0.1"}
 * ```
 */
export interface RateLimitInfo {
  /** The limit the request was checked against (ratekit mode: the binding limit's capacity). */
  limit: number;
  /** Hits counted in the window, this one included (ratekit mode: `limit − remaining`). */
  used: number;
  /** `max(limit − used, 0)`. */
  remaining: number;
  /** When the window resets; `undefined` when the store cannot tell. */
  resetTime: Date | undefined;
  /** The key the request was counted under, e.g. `127.0.0.1` or `2001:db8::/56`. */
  key: string;
  /** ratekit mode only: the whole decision (every limit's tokens, `retryAfterMs`, `delayMs`). */
  decision?: Decision;
}

/** The request with rate-limit info under any property name (express-rate-limit's `AugmentedRequest`). */
export type AugmentedRequest = Request & { [key: string]: RateLimitInfo };

/** An Express request after the limiter ran, with the default `requestPropertyName`. */
export type RateLimitedRequest = Request & { rateLimit?: RateLimitInfo };

/** The middleware returned by {@link rateLimit}. */
export type RateLimitRequestHandler = RequestHandler & {
  /** Forgets a key, e.g. after a captcha. Keys are as the key generator returns them: pass `ipKeyGenerator(ip)`, not the raw IP. */
  resetKey(key: string): ValueOrPromise<void>;
  /**
   * A key's hits and reset time, or `undefined` for an unknown key.
   * @throws {Error} synchronously when the store has no `get` ("The current store does not support the get/getKey method")
   */
  getKey(key: string): ValueOrPromise<ClientRateLimitInfo | undefined>;
  /** ratekit mode: the core limiter; `undefined` in express-rate-limit mode. */
  readonly limiter: Limiter<Request> | undefined;
};

/** @deprecated use {@link RateLimitRequestHandler}. */
export type RateLimitMiddleware = RateLimitRequestHandler;
/** @deprecated use {@link RateLimitExceededEventHandler}. */
export type RateLimitHandler = RateLimitExceededEventHandler;

/** The default handler's body: a value for `res.send`, or a function of the request returning one. */
export type RateLimitMessage = string | Buffer | Record<string, unknown> | unknown[] | ValueDeterminingMiddleware<unknown>;

/** The middleware returned by {@link slowDown}: the same instance methods as {@link RateLimitRequestHandler}. */
export type SlowDownRequestHandler = RateLimitRequestHandler;

/** How long to hold a request over `delayAfter`, in ms, from the hits so far (express-slow-down's `DelayFn`). */
export type DelayFn = (used: number, request: Request, response: Response) => number | Promise<number>;

/**
 * The options of {@link slowDown}: express-slow-down v2/v3's. Every
 * counting option of {@link Options} (`windowMs`, `store`, `keyGenerator`,
 * `skip`, `skip…Requests`, `validate`, …) applies as in express-rate-limit;
 * `limit`, `max`, `handler` and ratekit's options do not.
 */
export interface SlowDownOptions extends Omit<
  RateLimitOptions,
  'limit' | 'max' | 'handler' | 'message' | 'statusCode' | 'algorithm' | 'limits' | 'cost' | 'prefix' | 'onStoreError' | 'storeTimeoutMs' | 'onError' | 'refusalCache' | 'onDecision' | 'validate'
> {
  /** Requests per window served without delay, or a function of the request returning it. @default 1 */
  delayAfter?: number | ValueDeterminingMiddleware<number>;
  /**
   * The delay, in ms, of each request over `delayAfter`: a number (the same
   * for each; since express-slow-down v2) or a function of the hits so far.
   * @default `(used, req) => (used - delayAfter) * 1000`
   */
  delayMs?: number | DelayFn;
  /** The longest delay, in ms, or a function of the request returning it. At most 2³¹ − 1. @default 2³¹ − 1 */
  maxDelayMs?: number | ValueDeterminingMiddleware<number>;
  /** ratekit's: sends `X-Slow-Down-Delay: <ms>` (the delay applied to this request, `0` when none) on every counted request. Off by default: express-slow-down sends no such header. @default false */
  delayHeader?: boolean;
  /** As {@link Options.validate}, plus `delayMs` (the warning for a numeric `delayMs`). */
  validate?: boolean | (EnabledValidations & { delayMs?: boolean });
}

/** What {@link slowDown} puts on `req[requestPropertyName]` (default `req.slowDown`). */
export interface SlowDownInfo extends RateLimitInfo {
  /** The delay applied to this request, in ms (0 when none). */
  delay: number;
}
