/**
 * The options every adapter's ratekit mode shares, documented once, and their checks. An adapter
 * declares only what its framework adds (Hono's `getConnInfo`, the Fetch API's `ipHeader`) and the
 * type of its refusal answer; {@link resolveGateOptions} checks the rest when the middleware is
 * built, so a bad option throws a `RateKitOptionError` (code `ERR_RATEKIT_INVALID_OPTION`) naming
 * it, before the first request. The limiter's own options (`limits`, `cost`, `store`, `prefix`,
 * `onStoreError`, `storeTimeoutMs`, `onError`, `now`, `refusalCache`) are checked by
 * `createLimiter`, so each rule has one home.
 *
 * Names and defaults are express-rate-limit's (`limit` 5 per `windowMs` 60 000, `statusCode` 429,
 * its `message`), ratekit's where it has more (`algorithm`, `limits`, `cost`).
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { RateKitOptionError, type RateKitError } from '../errors.js';
import { resolveHeaderOptions } from '../headers/index.js';
import type { HeaderOptions, HeaderOptionsInput, StandardHeaders } from '../headers/options.js';
import { assertSubnet } from '../keys.js';
import { ALGORITHMS, type AlgorithmName, type LimitOptions } from '../limit.js';
import type { Limiter, LimitsOption } from '../limiter.js';
import type { TrustProxy } from '../proxy-chain.js';
import type { RateLimitStore } from '../stores/types.js';
import { assertFunction, assertInteger, assertOneOf, assertPositive, closestName } from '../validate.js';

/** What `keyGenerator` may return: a key (a finite number is its decimal string), or `false` to let the request through unlimited. */
export type KeyResult = string | number | false;

/** A refusal's body: text (sent as `text/plain`), or an object (sent as JSON). */
export type MessageBody = string | Record<string, unknown>;

/**
 * The options of an adapter's ratekit mode: `TContext` is what the framework hands the middleware
 * (Hono's `Context`, the Fetch API's `Request`), `TAnswer` what a `handler` returns (a `Response`).
 */
export interface GateOptions<TContext, TAnswer = unknown> {
  /** Requests (cost units) per `windowMs` and key: a positive number. Ignored when `limits` is given. @default 5 (as express-rate-limit) */
  limit?: number;
  /** The window, in milliseconds. @default 60_000 (as express-rate-limit) */
  windowMs?: number;
  /** The algorithm of the `limit`/`windowMs` limit: one of `ALGORITHMS`. @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /**
   * The policy instead of `limit`/`windowMs`/`algorithm`: one limit, several checked
   * all-or-nothing (if one refuses, none is charged), or a function of the context choosing them
   * (return the same objects each time, so they are validated once). Each may carry `blockDurationMs`.
   */
  limits?: LimitsOption<TContext>;
  /** The cost of a request, or a function of its context. @default 1 */
  cost?: number | ((context: TContext) => number);
  /**
   * The key of a request; `false` lets it through unlimited, with no headers. `address` is the
   * client address the adapter read, if any. Throwing, rejecting or returning anything but a
   * non-empty string, a finite number or `false` fails the request with a `RateKitError` of code
   * `ERR_RATEKIT_KEY`.
   * @default the client address (past `trustProxy`), grouped by `ipv6Subnet`
   */
  keyGenerator?: (context: TContext, address: string | undefined) => KeyResult | Promise<KeyResult>;
  /**
   * Which connections are proxies of yours, so that `X-Forwarded-For` is read past them (from the
   * right): `false`, a number of hops, or `(address, hop) => boolean`. `true` is refused: any
   * client could choose its key. @default false
   */
  trustProxy?: TrustProxy;
  /** The prefix length IPv6 clients are grouped by in the default key (1–128), or `false` for whole addresses. @default 56 */
  ipv6Subnet?: number | false;
  /** When it returns true, the request passes unlimited and uncounted, with no headers. May return a Promise. */
  skip?: (context: TContext) => boolean | Promise<boolean>;
  /**
   * Which IETF RateLimit header fields to send: `'draft-6'` (`true`), `'draft-7'`, `'draft-8'`
   * (to `'draft-11'`: one wire format, with named policies and the key hashed as `pk`) or `false`.
   * @default the adapter's (`'draft-8'` for @ratekit/fetch, `'draft-6'` for @ratekit/hono, as hono-rate-limiter)
   */
  standardHeaders?: StandardHeaders | true;
  /** Send `X-RateLimit-Limit`/`-Remaining`/`-Reset` (epoch seconds) too. @default false */
  legacyHeaders?: boolean;
  /** The status of a refusal, an integer from 400 to 599. @default 429 (RFC 6585 §4) */
  statusCode?: number;
  /**
   * The body of a refusal: text (`text/plain`), an object (JSON), or a function of the context and
   * decision returning either. @default 'Too many requests, please try again later.' (express-rate-limit's)
   */
  message?: MessageBody | ((context: TContext, decision: Decision) => MessageBody | Promise<MessageBody>);
  /** Answers a refusal instead of `statusCode` and `message`; the rate-limit headers and `Retry-After` are set on its answer. */
  handler?: (context: TContext, decision: Decision) => TAnswer | Promise<TAnswer>;
  /**
   * Called with every decision (metrics, logs). A Promise it returns is background work: handed to
   * the runtime's `waitUntil` where there is one (a Worker's `ctx`, Next.js's `event`), else
   * awaited before the request goes on. A throw or rejection goes to `onError`, never to the response.
   */
  onDecision?: (decision: Decision, context: TContext, key: string) => void | Promise<void>;
  /** Where state lives: any ratekit store. @default a new in-memory store */
  store?: RateLimitStore;
  /** This limiter's namespace in the store (no NUL). @default '' */
  prefix?: string;
  /**
   * What a failing or timed-out store call turns into: `'throw'` (the request fails with code
   * `ERR_RATEKIT_STORE`), `'allow'` (fail open), `'deny'` (fail closed) or a fallback limiter. @default 'throw'
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a fallback limiter of any context type
  onStoreError?: 'throw' | 'allow' | 'deny' | Limiter<any>;
  /** The longest a store call may take, in ms, before `onStoreError` applies. @default 1_000 */
  storeTimeoutMs?: number;
  /** Receives store failures handled by `onStoreError`, and failures of background work. @default console.error */
  onError?: (error: RateKitError) => void;
  /** The clock, Unix epoch ms. @default Date.now */
  now?: () => number;
  /** Refusals answered in-process for a shared store (core's `refusalCache`). @default on (10,000 keys) with a shared store */
  refusalCache?: boolean | { maxKeys?: number };
}

/** The names of {@link GateOptions}: what every adapter's ratekit mode accepts. */
export const GATE_OPTIONS = [
  'limit',
  'windowMs',
  'algorithm',
  'limits',
  'cost',
  'keyGenerator',
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
] as const;

/** What an adapter tells {@link resolveGateOptions} about itself. */
export interface GateAdapterSpec {
  /** The function users call, for error messages: `'rateLimit()'`. */
  readonly name: string;
  /** The options the adapter adds to {@link GATE_OPTIONS} (it checks them itself). */
  readonly options?: readonly string[];
  /** Names users of other limiters may pass: ours (`max: 'limit'`), or why there is none (`'nothing: …'`). */
  readonly renamed?: Readonly<Record<string, string>>;
  /** The adapter's default `standardHeaders`. */
  readonly standardHeaders: StandardHeaders;
  /** The key function as the adapter's users call it, for errors ("The keyGenerator failed: …"): `` '`id(ctx)`' `` in @ratekit/koa. @default 'keyGenerator' */
  readonly keyOption?: string;
  /** Header options the adapter fixes (Hono's `retryAfter` and `combineLists`, as hono-rate-limiter; Fastify's `legacyReset`, as @fastify/rate-limit). */
  readonly headers?: Pick<HeaderOptionsInput, 'retryAfter' | 'combineLists' | 'legacyReset'>;
  /**
   * The user's names of the gate options the adapter passes under another name (koa-ratelimit's
   * `status` for `statusCode`): an error about one of them names the option as the user wrote it,
   * and the adapter need not check it again under its own name.
   */
  readonly optionNames?: Readonly<Partial<Record<keyof GateOptions<never>, string>>>;
}

/** What the request path needs, checked once. */
export interface ResolvedGateOptions<TContext> {
  readonly limits: LimitsOption<TContext>;
  readonly headerOptions: HeaderOptions;
  readonly statusCode: number;
  readonly trustProxy: TrustProxy;
  readonly ipv6Subnet: number | false;
}

/** Names users of other limiters pass to any adapter. */
const RENAMED: Readonly<Record<string, string>> = { max: 'limit', duration: 'windowMs', headers: 'legacyHeaders', id: 'keyGenerator' };

/**
 * Checks the shared options of an adapter's ratekit mode and resolves their defaults.
 *
 * @param options - the user's options (the adapter's own names are skipped: it checks them)
 * @param spec - the adapter's name, extra options and defaults
 * @returns the resolved options the gate needs
 * @throws {RateKitOptionError} naming the first bad option: an unknown name (with the closest
 * known one, or the name ratekit uses for another limiter's option), a wrong type, or options
 * that conflict (`limit` beside `limits`, `trustProxy` beside `keyGenerator`, `message` beside `handler`)
 * @example
 * ```ts
 * resolveGateOptions({ limit: 100, windowMs: 60_000 }, { name: 'rateLimit()', standardHeaders: 'draft-8' });
 * ```
 */
export function resolveGateOptions<TContext>(options: GateOptions<TContext>, spec: GateAdapterSpec): ResolvedGateOptions<TContext> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass anything
  if (typeof options !== 'object' || options === null) throw new RateKitOptionError('options', 'an object', options);
  assertKnownOptions(options, spec);
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
    throw new RateKitOptionError('message', 'a string, an object (sent as JSON) or a function of the context and decision', message);
  }
  if (message !== undefined && options.handler !== undefined) throw new RateKitOptionError('message', 'unset when `handler` is given (the handler writes the body)', message);
  const trustProxy = options.trustProxy ?? false;
  if (trustProxy !== false && typeof trustProxy !== 'function' && (typeof trustProxy !== 'number' || !Number.isInteger(trustProxy) || trustProxy < 0)) {
    throw new RateKitOptionError('trustProxy', 'false, a number of proxy hops (an integer ≥ 0) or a function (address, hop) => boolean (true would let any client choose its key)', trustProxy);
  }
  const ipv6Subnet = options.ipv6Subnet ?? 56;
  assertSubnet(ipv6Subnet);
  if (options.keyGenerator !== undefined) {
    for (const name of ['trustProxy', 'ipv6Subnet'] as const) {
      if (options[name] !== undefined)
        throw new RateKitOptionError(name, 'unset when `keyGenerator` is given (it shapes the default key only; use ipKeyGenerator from @ratekit/core in yours)', options[name]);
    }
  }
  const headerOptions = resolveHeaderOptions({ standardHeaders: options.standardHeaders ?? spec.standardHeaders, legacyHeaders: options.legacyHeaders ?? false, ...spec.headers });
  return { limits: resolveLimits(options), headerOptions, statusCode, trustProxy, ipv6Subnet };
}

/** Refuses a name that is neither the gate's nor the adapter's, naming ours for another limiter's, or the closest. */
function assertKnownOptions(options: object, spec: GateAdapterSpec): void {
  const known: readonly string[] = spec.options === undefined ? GATE_OPTIONS : [...GATE_OPTIONS, ...spec.options];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || known.includes(name)) continue;
    const renamed = spec.renamed?.[name] ?? RENAMED[name];
    const closest = renamed === undefined ? closestName(name, known) : undefined;
    const hint =
      renamed !== undefined
        ? renamed.startsWith('nothing: ')
          ? ` (${renamed.slice('nothing: '.length)})`
          : ` (did you mean \`${renamed}\`?)`
        : closest === undefined
          ? ''
          : ` (did you mean \`${closest}\`?)`;
    throw new RateKitOptionError(name, `unset: ${spec.name} has no such option${hint}`, value);
  }
}

/** `limits`, or one limit of `limit` per `windowMs` with `algorithm`; the limit's own rules are `resolveLimit`'s. */
function resolveLimits<TContext>(options: GateOptions<TContext>): LimitsOption<TContext> {
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

/**
 * Runs `build`, and rethrows a {@link RateKitOptionError} about an option the adapter renamed
 * under the user's name for it (`statusCode` → `status`; `limits[0].limit` keeps its own path).
 *
 * @param names - the adapter's {@link GateAdapterSpec.optionNames}
 * @param build - what checks the options
 * @throws {RateKitOptionError} what `build` throws, renamed; anything else as it is
 */
export function withOptionNames<T>(names: GateAdapterSpec['optionNames'], build: () => T): T {
  if (names === undefined) return build();
  try {
    return build();
  } catch (error) {
    const renamed = error instanceof RateKitOptionError ? (names as Record<string, string | undefined>)[error.option] : undefined;
    if (renamed === undefined) throw error;
    throw new RateKitOptionError(renamed, (error as RateKitOptionError).expected, (error as RateKitOptionError).received);
  }
}
