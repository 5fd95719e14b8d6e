/**
 * The options of {@link rateLimit} and their checks. Every option is checked
 * when the function is built, so a bad one throws a `RateKitOptionError`
 * (code `ERR_RATEKIT_INVALID_OPTION`) naming it, before the first request.
 * The limiter's own options (`limits`, `cost`, `store`, `prefix`,
 * `onStoreError`, `storeTimeoutMs`, `onError`, `now`, `refusalCache`) are
 * checked by @ratekit/core's `createLimiter`.
 *
 * The names and meanings are express-rate-limit's and @ratekit/express's
 * ratekit mode's, where the Fetch API has the same thing.
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

/** What `keyGenerator` may return: a key, or `false` to let the request through unlimited (no headers). */
export type KeyResult = string | false;

/** What a refusal's body may be: text (sent as `text/plain`), or an object (sent as JSON). */
export type MessageBody = string | Record<string, unknown>;

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /** Requests (cost units) per `windowMs` and key. Ignored when `limits` is given. @default 5 (as express-rate-limit) */
  limit?: number;
  /** The window, in milliseconds. @default 60_000 (as express-rate-limit) */
  windowMs?: number;
  /** The algorithm of the `limit`/`windowMs` limit: one of @ratekit/core's `ALGORITHMS`. @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /**
   * The policy instead of `limit`/`windowMs`/`algorithm`: one limit, several
   * checked all-or-nothing (if one refuses, none is charged), or a function
   * of the `Request` choosing them (return the same objects each time, so
   * they are validated once). Each limit may carry `blockDurationMs`.
   */
  limits?: LimitsOption<Request>;
  /** The cost of a request, or a function of it. @default 1 */
  cost?: number | ((request: Request) => number);
  /**
   * The key of a request. Return `false` to let it through unlimited (no
   * headers). Throwing, rejecting or returning anything but a non-empty
   * string or `false` makes the call reject with a `RateKitError` of code
   * `ERR_RATEKIT_KEY`. `ip` is the address given for the call, if any.
   * @default the client address (see `ip`, `ipHeader`, `trustProxy`), grouped by `ipv6Subnet`
   */
  keyGenerator?: (request: Request, ip: string | undefined) => KeyResult | Promise<KeyResult>;
  /**
   * A header your edge sets to the client's address, overwriting whatever
   * the client sent, read by the default key instead of the address given
   * per call: `'cf-connecting-ip'` on Cloudflare Workers, `'x-real-ip'` on
   * Vercel, `'fly-client-ip'` on Fly.io. Only set it when every request
   * comes through that edge: anyone who reaches the app directly chooses
   * their own key with it. A request without the header fails with
   * `ERR_RATEKIT_KEY`.
   */
  ipHeader?: string;
  /**
   * Which connections are proxies of yours, so that `X-Forwarded-For` is
   * read past them (from the right): `false`, a number of hops, or
   * `(address, hop) => boolean`. `true` is refused (any client could choose
   * its key). Applies to the address given per call.
   * @default false
   */
  trustProxy?: TrustProxy;
  /** The prefix length IPv6 clients are grouped by in the default key (1–128), or `false` for whole addresses. @default 56 */
  ipv6Subnet?: number | false;
  /** When it returns true, the request passes unlimited and uncounted, with no headers. May return a Promise. */
  skip?: (request: Request) => boolean | Promise<boolean>;
  /**
   * Which IETF RateLimit header fields to send: `'draft-6'` (`true`),
   * `'draft-7'`, `'draft-8'` (to `'draft-11'`: one wire format, with named
   * policies and the key hashed as `pk`) or `false`.
   * @default 'draft-8'
   */
  standardHeaders?: StandardHeaders | true;
  /** Send `X-RateLimit-Limit`/`-Remaining`/`-Reset` (epoch seconds) too. @default false */
  legacyHeaders?: boolean;
  /** The status of a refusal, 400–599. @default 429 */
  statusCode?: number;
  /**
   * The body of a refusal: text (`text/plain`), an object (JSON), or a
   * function of the request and decision returning either.
   * @default 'Too many requests, please try again later.' (express-rate-limit's)
   */
  message?: MessageBody | ((request: Request, decision: Decision) => MessageBody | Promise<MessageBody>);
  /**
   * Answers a refusal instead of `statusCode` and `message`. The rate-limit
   * headers (and `Retry-After`) are set on the Response it returns, replacing
   * fields of the same names.
   */
  handler?: (request: Request, decision: Decision) => Response | Promise<Response>;
  /**
   * Called with every decision (metrics, logs). A Promise it returns is
   * background work: handed to the call's `waitUntil` when given one (a
   * Worker's `ctx`, Next.js's `event`), else awaited before the call
   * resolves. A throw or rejection goes to `onError`, never to the response.
   */
  onDecision?: (decision: Decision, request: Request, key: string) => void | Promise<void>;
  /** Where state lives: any ratekit store (memory, Redis, the edge stores…). @default a new in-memory store */
  store?: RateLimitStore;
  /** This limiter's namespace in the store (no NUL). @default '' */
  prefix?: string;
  /**
   * What a failing or timed-out store call turns into: `'throw'` (the call
   * rejects with code `ERR_RATEKIT_STORE`), `'allow'` (fail open),
   * `'deny'` (fail closed) or a fallback limiter. @default 'throw'
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a fallback limiter of any context type
  onStoreError?: 'throw' | 'allow' | 'deny' | Limiter<any>;
  /** The longest a store call may take, in ms, before `onStoreError` applies. @default 1_000 */
  storeTimeoutMs?: number;
  /** Receives store failures handled by `onStoreError`, and failures of `onDecision`. @default console.error */
  onError?: (error: RateKitError) => void;
  /** The clock, Unix epoch ms. @default Date.now */
  now?: () => number;
  /** Refusals answered in-process for a shared store (core's `refusalCache`). @default on (10,000 keys) with a shared store */
  refusalCache?: boolean | { maxKeys?: number };
}

/** What the per-request path needs, checked once. */
export interface ResolvedOptions {
  readonly limits: LimitsOption<Request>;
  readonly headerOptions: HeaderOptions;
  /** Any header on at all. */
  readonly anyHeaders: boolean;
  readonly statusCode: number;
  readonly ipHeader: string | undefined;
  readonly trustProxy: TrustProxy;
  readonly ipv6Subnet: number | false;
  /** True when `limits` or `cost` is a function, so the limiter needs the request as its context. */
  readonly needsContext: boolean;
}

const KNOWN: ReadonlySet<string> = new Set([
  'limit',
  'windowMs',
  'algorithm',
  'limits',
  'cost',
  'keyGenerator',
  'ipHeader',
  'trustProxy',
  'ipv6Subnet',
  'skip',
  'standardHeaders',
  'legacyHeaders',
  'statusCode',
  'message',
  'handler',
  'onDecision',
  'store',
  'prefix',
  'onStoreError',
  'storeTimeoutMs',
  'onError',
  'now',
  'refusalCache',
]);

/** Names other limiters use, for the error's hint: ours, or (`nothing: …`) why there is none. */
const RENAMED: Readonly<Record<string, string>> = {
  max: 'limit',
  duration: 'windowMs',
  headers: 'legacyHeaders',
  requestPropertyName: 'nothing: the decision is in the result, `result.decision`',
  skipFailedRequests: 'nothing: the function does not see the response; call `limit.limiter.refund(result.key)` when it fails',
  skipSuccessfulRequests: 'nothing: the function does not see the response; call `limit.limiter.refund(result.key)` when it succeeds',
};

/** An HTTP field name (RFC 9110 `token`). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Checks the options of {@link rateLimit} (all but the limiter's own, which
 * `createLimiter` checks) and resolves their defaults.
 *
 * @throws {RateKitOptionError} naming the first bad option.
 */
export function resolveOptions(options: RateLimitOptions): ResolvedOptions {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass anything
  if (typeof options !== 'object' || options === null) throw new RateKitOptionError('options', 'an object', options);
  for (const name of Object.keys(options)) {
    const value = (options as Record<string, unknown>)[name];
    if (KNOWN.has(name) || value === undefined) continue;
    const renamed = RENAMED[name];
    const hint = renamed === undefined ? '' : renamed.startsWith('nothing: ') ? ` (${renamed.slice('nothing: '.length)})` : ` (did you mean \`${renamed}\`?)`;
    throw new RateKitOptionError(name, `unset: rateLimit() has no such option${hint}`, value);
  }
  for (const name of ['keyGenerator', 'skip', 'handler', 'onDecision'] as const) {
    if (options[name] !== undefined) assertFunction(name, options[name]);
  }
  if (options.legacyHeaders !== undefined && typeof options.legacyHeaders !== 'boolean') throw new RateKitOptionError('legacyHeaders', 'a boolean', options.legacyHeaders);
  const statusCode = options.statusCode ?? 429;
  assertInteger('statusCode', statusCode, 400);
  if (statusCode > 599) throw new RateKitOptionError('statusCode', 'an integer from 400 to 599', statusCode);
  const { message } = options;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input
  if (message !== undefined && (message === null || !['string', 'object', 'function'].includes(typeof message))) {
    throw new RateKitOptionError('message', 'a string, an object (sent as JSON) or a function of the request and decision', message);
  }
  if (message !== undefined && options.handler !== undefined) throw new RateKitOptionError('message', 'unset when `handler` is given (the handler writes the body)', message);

  const headerOptions = resolveHeaderOptions({ standardHeaders: options.standardHeaders ?? 'draft-8', legacyHeaders: options.legacyHeaders ?? false });
  return {
    limits: resolveLimits(options),
    headerOptions: { ...headerOptions },
    anyHeaders: headerOptions.legacyHeaders || headerOptions.standardHeaders !== false,
    statusCode,
    ...resolveKeyOptions(options),
    needsContext: typeof options.limits === 'function' || typeof options.cost === 'function',
  };
}

/** `limits`, or one limit of `limit` per `windowMs` with `algorithm`. */
function resolveLimits(options: RateLimitOptions): LimitsOption<Request> {
  if (options.limits !== undefined) {
    for (const name of ['limit', 'windowMs', 'algorithm'] as const) {
      if (options[name] !== undefined) throw new RateKitOptionError(name, 'unset when `limits` is given (set it in each limit)', options[name]);
    }
    return options.limits;
  }
  const limit = options.limit ?? 5;
  assertPositive('limit', limit);
  const windowMs = options.windowMs ?? 60_000;
  assertPositive('windowMs', windowMs, ' of milliseconds');
  const algorithm = options.algorithm ?? 'fixed-window';
  assertOneOf('algorithm', algorithm, ALGORITHMS);
  const one: LimitOptions = { algorithm, limit, windowMs };
  return one;
}

/** `ipHeader`, `trustProxy` and `ipv6Subnet`: checked, and refused beside a `keyGenerator`, which they would not shape. */
function resolveKeyOptions(options: RateLimitOptions): Pick<ResolvedOptions, 'ipHeader' | 'trustProxy' | 'ipv6Subnet'> {
  const { ipHeader } = options;
  if (ipHeader !== undefined && (typeof ipHeader !== 'string' || !FIELD_NAME.test(ipHeader))) {
    throw new RateKitOptionError('ipHeader', "a header name your edge sets, such as 'cf-connecting-ip'", ipHeader);
  }
  const trustProxy = options.trustProxy ?? false;
  if (trustProxy !== false && typeof trustProxy !== 'function' && (typeof trustProxy !== 'number' || !Number.isInteger(trustProxy) || trustProxy < 0)) {
    throw new RateKitOptionError('trustProxy', 'false, a number of proxy hops (an integer ≥ 0) or a function (address, hop) => boolean (true would let any client choose its key)', trustProxy);
  }
  if (ipHeader !== undefined && options.trustProxy !== undefined) {
    throw new RateKitOptionError('trustProxy', 'unset when `ipHeader` is given (the edge header already names the client)', options.trustProxy);
  }
  const ipv6Subnet = options.ipv6Subnet ?? 56;
  if (ipv6Subnet !== false && (typeof ipv6Subnet !== 'number' || !Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128)) {
    throw new RateKitOptionError('ipv6Subnet', 'an integer from 1 to 128, or false', ipv6Subnet);
  }
  if (options.keyGenerator !== undefined) {
    for (const name of ['ipHeader', 'trustProxy', 'ipv6Subnet'] as const) {
      if (options[name] !== undefined)
        throw new RateKitOptionError(name, 'unset when `keyGenerator` is given (it shapes the default key only; use ipKeyGenerator from @ratekit/core in yours)', options[name]);
    }
  }
  return { ipHeader: ipHeader?.toLowerCase(), trustProxy, ipv6Subnet };
}
