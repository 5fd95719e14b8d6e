import { assertFunction, assertObject, type Decision, type GateOptions, type HeaderList, memoryStore, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import type { ParameterizedContext } from 'koa';
import { RATEKIT_OPTIONS } from './mode.js';
import { KOA_RATELIMIT_OPTIONS } from './compat/options.js';
import type { IoRedisLike } from './compat/redis-driver.js';

/** What `id` may return: a key, or `false` to let the request through without limiting it. */
export type KeyResult = string | number | false;

/** The names of the three legacy headers (koa-ratelimit's `headers` option); each defaults on its own. */
export interface HeaderNameOptions {
  /** @default 'X-RateLimit-Remaining' */
  remaining?: string;
  /** Absolute time of the reset, Unix epoch seconds (whole). @default 'X-RateLimit-Reset' */
  reset?: string;
  /** The limit. @default 'X-RateLimit-Limit' */
  total?: string;
}

/**
 * @types/koa-ratelimit's name for the options (`ratelimit.MiddlewareOptions`):
 * {@link RateLimitOptions} for Koa's default context.
 */
export type MiddlewareOptions<TContext = ParameterizedContext> = RateLimitOptions<TContext>;

/** koa-ratelimit 6's options, as both modes read them. */
export interface KoaRatelimitOptions<TContext> {
  /**
   * Where state lives, as in koa-ratelimit. `'redis'`: koa-ratelimit's
   * sliding log, a sorted set per `<namespace>:<id>` on the ioredis client
   * `db`. `'memory'`: koa-ratelimit's fixed windows, in the `Map` `db` (or a
   * Map of the middleware's own), bounded by `maxKeys`.
   * In ratekit mode only `'memory'` is accepted (pass a {@link RateLimitStore}
   * as `store` for Redis).
   * @default 'redis' when `db` is an ioredis client, otherwise 'memory'
   */
  driver?: 'memory' | 'redis';
  /**
   * koa-ratelimit's database: an ioredis client (`Redis` or `Cluster`) for
   * the `'redis'` driver, a `Map` for `'memory'`. In koa-ratelimit mode the
   * Map holds koa-ratelimit's own entries (`<namespace>:<id>` →
   * `{ id, reset, remaining, total }`), so `db.clear()` resets every count.
   * In ratekit mode the Map holds no state: middlewares given the same Map
   * share one bounded in-memory store.
   */
  db?: Map<unknown, unknown> | IoRedisLike;
  /** The window, in milliseconds. Ignored when `limits` is given. @default 3_600_000 (1 hour, as koa-ratelimit) */
  duration?: number;
  /** Requests allowed per `duration` and key. Ignored when `limits` is given. @default 2500 (as koa-ratelimit) */
  max?: number;
  /**
   * The most keys the in-memory state holds (ratekit's addition; works in
   * both modes). koa-ratelimit mode: when a new window would make the `db`
   * Map hold more, the oldest windows are deleted first. ratekit mode:
   * @ratekit/core's memory store bound (see `MemoryStoreOptions.maxKeys`).
   * @default 100_000 in koa-ratelimit mode; the core's default in ratekit mode
   */
  maxKeys?: number;
  /**
   * The key of a request. Return `false` to let the request through
   * unlimited (no headers). A number is used as its decimal string.
   * koa-ratelimit mode: synchronous, called before `whitelist` and
   * `blacklist`, default `ctx.ip` as is; a falsy key fails the request (500).
   * ratekit mode: may return a Promise. Throwing, or returning anything else (`undefined`,
   * `''`, `null`), fails the request with a `RateKitError` of code
   * `ERR_RATEKIT_KEY` (status 500); the next request is served normally.
   * @default the client IP, `ipKeyGenerator(ctx.ip)` from @ratekit/core (IPv6 grouped by /56). `ctx.ip` honours `app.proxy`.
   */
  id?: (ctx: TContext) => KeyResult | Promise<KeyResult>;
  /**
   * This middleware's namespace in the store, so several middlewares can
   * share a store (or a `db`) without sharing counters. No NUL characters.
   * @default 'limit'
   */
  namespace?: string;
  /** Custom names for the three legacy headers; each defaults on its own. */
  headers?: HeaderNameOptions;
  /** Send no legacy `X-RateLimit-*` headers (`Retry-After` is still sent on refusals). Same as `legacyHeaders: false`. @default false */
  disableHeader?: boolean;
  /** When it returns true, the request passes unlimited and uncounted, with no headers. May return a Promise. */
  whitelist?: (ctx: TContext) => boolean | Promise<boolean>;
  /** When it returns true, the request is refused with `ctx.throw(403, 'Forbidden')`. Checked before `whitelist` and `id`. May return a Promise. */
  blacklist?: (ctx: TContext) => boolean | Promise<boolean>;
  /**
   * The body of a refusal: a string (sent as text), an object (sent as
   * JSON), or a function of the context and decision returning either.
   * koa-ratelimit mode: any body value (a function is not called).
   * @default koa-ratelimit mode: `Rate limit exceeded, retry in <ms long>.` (as koa-ratelimit, e.g. `retry in 59 minutes.`); ratekit mode: 'Too many requests, please try again later.' (@ratekit/core's `DEFAULT_REFUSAL_MESSAGE`)
   */
  errorMessage?: string | object | ((ctx: TContext, decision: Decision) => string | object);
  /** The status of a refusal, 400–599. @default 429 */
  status?: number;
  /**
   * Refuse with `ctx.throw(status, message, { headers })` instead of setting
   * status and body, so the app's error middleware answers. The error
   * carries every rate-limit header and `Retry-After` in `headers`, because
   * Koa's default error handler drops the headers already set on the
   * response and applies `err.headers`. An object `errorMessage` is put on
   * the error as `body`.
   * @default false
   */
  throw?: boolean;
  /**
   * Called on each refusal, after status, body and headers are set (in
   * `throw` mode: just before the throw). It may change the response.
   * koa-ratelimit mode: called as `onLimited(ctx)` (no decision) and not
   * awaited, as koa-ratelimit; a Promise it returns that rejects is reported
   * with `ctx.app.emit('error', error, ctx)`. ratekit mode: a Promise it
   * returns is awaited.
   */
  onLimited?: (ctx: TContext, decision: Decision) => void | Promise<void>;

  /**
   * The longest an asynchronous store call may take, in ms (1 to 2³¹ − 1, or `Infinity`); works in
   * both modes. koa-ratelimit mode: each Redis call, which then fails the request with
   * `ERR_RATEKIT_STORE` (500; koa-ratelimit waits for ever). ratekit mode: handled by `onStoreError`.
   * @default 1_000
   */
  storeTimeoutMs?: number;
}

/**
 * The options of ratekit mode that koa-ratelimit lacks, as @ratekit/core's gate documents them
 * (`GateOptions`). Koa's defaults: `standardHeaders` false and `legacyHeaders` true (unless
 * `disableHeader`), as koa-ratelimit sends; the draft-8+ list fields are appended, so stacked
 * middlewares each add their policy; `store` defaults to a bounded in-memory store (see `db`).
 */
export type RateKitOnlyOptions<TContext> = Pick<
  GateOptions<TContext>,
  'algorithm' | 'limits' | 'cost' | 'standardHeaders' | 'legacyHeaders' | 'store' | 'onStoreError' | 'onError' | 'now' | 'refusalCache'
>;

/**
 * Options of {@link ratelimit}: koa-ratelimit 6's, option for option, and ratekit's own; giving
 * any of ratekit's (but `storeTimeoutMs` and `maxKeys`, which work in both) selects ratekit mode.
 * In koa-ratelimit mode the options are read as koa-ratelimit reads them (unknown ones ignored,
 * with a process warning). In ratekit mode every option is checked when the middleware is built,
 * and a bad one throws a {@link RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming it.
 *
 * `TContext` is the Koa context type the callbacks receive.
 */
export type RateLimitOptions<TContext> = KoaRatelimitOptions<TContext> & RateKitOnlyOptions<TContext>;

/** ratekit mode's options, checked once: the gate's, translated from koa-ratelimit's names, and Koa's own. */
export interface ResolvedOptions<TContext> {
  /** `max`/`duration` as `limit`/`windowMs`, `id` as `keyGenerator`, `whitelist` as `skip`, `status` as `statusCode`, `errorMessage` as `message`, `namespace` as `prefix`, and the store. */
  readonly gate: GateOptions<TContext>;
  readonly blacklist: ((ctx: TContext) => boolean | Promise<boolean>) | undefined;
  /** The fields with the legacy names `headers` gives; the identity without `headers`. */
  readonly rename: (headers: Readonly<HeaderList>) => Readonly<HeaderList>;
  readonly throw: boolean;
  readonly onLimited: ((ctx: TContext, decision: Decision) => void | Promise<void>) | undefined;
}

/** Every option ratekit mode reads: koa-ratelimit's and ratekit's. */
const KNOWN: ReadonlySet<string> = new Set([...KOA_RATELIMIT_OPTIONS, ...RATEKIT_OPTIONS]);

/** Names from other limiters that users migrating are likely to pass, and ours. */
const RENAMED: Record<string, string> = {
  windowMs: 'duration',
  timeWindow: 'duration',
  limit: 'max',
  keyGenerator: 'id',
  prefix: 'namespace',
  message: 'errorMessage',
  statusCode: 'status',
  handler: 'onLimited',
  skip: 'whitelist',
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** One bounded memory store per koa-ratelimit `db` Map, so middlewares sharing a Map share state as they did. */
const storesByDb = new WeakMap<Map<unknown, unknown>, RateLimitStore>();

/**
 * Validates Koa's own options of {@link ratelimit} and translates koa-ratelimit's names to the gate's,
 * which checks those when the middleware builds it, naming them as the user wrote them ({@link OPTION_NAMES}).
 * Internal: exported for its test.
 *
 * @throws {RateKitOptionError} naming the first bad option of Koa's own.
 */
export function resolveOptions<TContext>(options: RateLimitOptions<TContext> = {}): ResolvedOptions<TContext> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- widened so the assertion does not narrow `options` itself
  assertObject('options', options as unknown);
  for (const name of Object.keys(options)) {
    if (KNOWN.has(name) || (options as Record<string, unknown>)[name] === undefined) continue;
    const hint = RENAMED[name] === undefined ? '' : ` (did you mean \`${RENAMED[name]}\`?)`;
    throw new RateKitOptionError(name, `unset: ratelimit() has no such option${hint}`, (options as Record<string, unknown>)[name]);
  }
  assertBoolean('disableHeader', options.disableHeader);
  assertBoolean('throw', options.throw);
  if (options.disableHeader === true && options.legacyHeaders === true) {
    throw new RateKitOptionError('legacyHeaders', 'unset or false when `disableHeader` is true', true);
  }
  for (const name of ['blacklist', 'onLimited'] as const) {
    if (options[name] !== undefined) assertFunction(name, options[name]);
  }
  // The gate checks the options translated here, and names them as the user wrote them (OPTION_NAMES).
  const gate: GateOptions<TContext> = {
    ...limitOptions(options),
    cost: options.cost,
    keyGenerator: options.id,
    skip: options.whitelist,
    standardHeaders: options.standardHeaders ?? false,
    legacyHeaders: options.legacyHeaders ?? !(options.disableHeader ?? false),
    statusCode: options.status,
    message: options.errorMessage as GateOptions<TContext>['message'],
    store: resolveStore(options),
    prefix: options.namespace ?? 'limit',
    onStoreError: options.onStoreError,
    storeTimeoutMs: options.storeTimeoutMs,
    onError: options.onError,
    now: options.now,
    refusalCache: options.refusalCache,
  };
  return {
    gate,
    blacklist: options.blacklist,
    rename: renamer(resolveRenames(options.headers)),
    throw: options.throw ?? false,
    onLimited: options.onLimited,
  };
}

/** koa-ratelimit's `max` per `duration`, with its defaults, as the gate's `limit` and `windowMs`; beside `limits`, as given (the gate refuses them there). */
function limitOptions<TContext>(options: RateLimitOptions<TContext>): Pick<GateOptions<TContext>, 'limits' | 'limit' | 'windowMs' | 'algorithm'> {
  if (options.limits !== undefined) return { limits: options.limits, limit: options.max, windowMs: options.duration, algorithm: options.algorithm };
  return { limit: options.max ?? 2500, windowMs: options.duration ?? 3_600_000, algorithm: options.algorithm ?? 'fixed-window' };
}

/** koa-ratelimit's names of the gate options translated above, for the gate's errors. */
export const OPTION_NAMES = { limit: 'max', windowMs: 'duration', keyGenerator: 'id', skip: 'whitelist', statusCode: 'status', message: 'errorMessage', prefix: 'namespace' } as const;

/** `store`, the store shared by a `db` Map, or a new bounded memory store. */
function resolveStore<TContext>(options: RateLimitOptions<TContext>): RateLimitStore {
  const { driver, db, store } = options;
  if (driver !== undefined && driver !== 'memory') {
    throw new RateKitOptionError(
      'driver',
      "'memory' in ratekit mode (for Redis, pass a RateLimitStore such as @ratekit/redis's as `store`, or drop the ratekit options to run koa-ratelimit's Redis driver)",
      driver,
    );
  }
  const maxKeys = options.maxKeys;
  if (maxKeys !== undefined && store !== undefined) throw new RateKitOptionError('maxKeys', 'unset when `store` is given', maxKeys);
  if (store !== undefined) {
    if (db !== undefined) throw new RateKitOptionError('db', 'unset when `store` is given', db);
    if (driver !== undefined) throw new RateKitOptionError('driver', 'unset when `store` is given', driver);
    return store; // createLimiter checks its shape
  }
  if (db === undefined) return memoryStore(maxKeys === undefined ? {} : { maxKeys });
  if (!(db instanceof Map)) {
    throw new RateKitOptionError('db', 'a Map (the memory driver; for Redis, pass a RateLimitStore as `store`)', db);
  }
  let shared = storesByDb.get(db);
  if (shared === undefined) {
    shared = memoryStore(maxKeys === undefined ? {} : { maxKeys });
    storesByDb.set(db, shared);
  }
  return shared;
}

/** A list's fields with the names of `renames` (by the core's lower-case legacy name). */
function renamer(renames: ReadonlyMap<string, string> | undefined): (headers: Readonly<HeaderList>) => Readonly<HeaderList> {
  if (renames === undefined) return (headers) => headers;
  return (headers) => headers.map(([name, value]): [string, string] => [renames.get(name.toLowerCase()) ?? name, value]);
}

/** koa-ratelimit's `headers` option, as a map from the core's legacy names. */
export function resolveRenames(headers: RateLimitOptions<unknown>['headers']): ReadonlyMap<string, string> | undefined {
  if (headers === undefined) return undefined;
  assertObject('headers', headers);
  const renames = new Map<string, string>();
  const fields = { remaining: 'x-ratelimit-remaining', reset: 'x-ratelimit-reset', total: 'x-ratelimit-limit' } as const;
  for (const [field, coreName] of Object.entries(fields)) {
    const name = headers[field];
    if (name === undefined) continue;
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) {
      throw new RateKitOptionError(`headers.${field}`, "a header name (letters, digits and !#$%&'*+.^_`|~-)", name);
    }
    renames.set(coreName, name);
  }
  for (const field of Object.keys(headers)) {
    if (!(field in fields)) throw new RateKitOptionError(`headers.${field}`, 'unset: only `remaining`, `reset` and `total` can be renamed', headers[field]);
  }
  return renames.size === 0 ? undefined : renames;
}

function assertBoolean(option: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw new RateKitOptionError(option, 'a boolean', value);
}
