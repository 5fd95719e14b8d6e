import { RateKitOptionError, resolveStoreTimeoutMs } from '@ratekit/core';
import type { Driver } from './drivers.js';
import { refuseWhatCanOnlyFail } from './failing-options.js';
import { DEFAULT_MAX_KEYS, MemoryDriver } from './memory-driver.js';
import { isIoRedis, RedisDriver } from './redis-driver.js';

/** The options koa-ratelimit 6 reads, and the two ratekit adds that work in both modes (`storeTimeoutMs`, `maxKeys`). */
export const KOA_RATELIMIT_OPTIONS = [
  'driver',
  'db',
  'duration',
  'max',
  'id',
  'namespace',
  'headers',
  'disableHeader',
  'whitelist',
  'blacklist',
  'errorMessage',
  'status',
  'throw',
  'onLimited',
  'storeTimeoutMs',
  'maxKeys',
] as const;

/** koa-ratelimit 6's defaults: 2500 requests per hour per `ctx.ip`, under `limit:`. */
export const DEFAULTS = { duration: 3_600_000, max: 2500, namespace: 'limit' } as const;

/** koa-ratelimit 6's header names. */
export const DEFAULT_HEADERS = { remaining: 'X-RateLimit-Remaining', reset: 'X-RateLimit-Reset', total: 'X-RateLimit-Limit' } as const;

/** The options koa-ratelimit 6 reads, and the two ratekit adds that work in this mode. */
const COMPAT_OPTIONS: ReadonlySet<string> = new Set(KOA_RATELIMIT_OPTIONS);

/** The resolved options of a koa-ratelimit-mode middleware. `TContext` is the Koa context. */
export interface CompatParams<TContext> {
  readonly driver: Driver;
  readonly namespace: string;
  readonly id: (ctx: TContext) => unknown;
  readonly whitelist: ((ctx: TContext) => unknown) | undefined;
  readonly blacklist: ((ctx: TContext) => unknown) | undefined;
  readonly names: { readonly remaining: string; readonly reset: string; readonly total: string };
  readonly disableHeader: boolean;
  readonly errorMessage: unknown;
  readonly status: unknown;
  readonly throw: boolean;
  readonly onLimited: ((ctx: TContext) => unknown) | undefined;
}

/**
 * Resolves koa-ratelimit 6's options as it does: defaults for what is not
 * given, no checks on values it does not check. Unknown options are ignored
 * as upstream ignores them, with one process warning naming them (a typo
 * such as `onLimit` would otherwise go unseen).
 *
 * The driver: `'redis'` with an ioredis client as `db`, or `'memory'` with a
 * `Map` (or none: a Map of the middleware's own). Without `driver`, a Redis
 * client as `db` picks `'redis'` (koa-ratelimit's default) and anything else
 * `'memory'`.
 *
 * @throws {RateKitOptionError} when the driver cannot work (an unknown
 * `driver`, `'redis'` without an ioredis client, `'memory'` with a `db`
 * that is not a Map; koa-ratelimit fails every request instead), or for a
 * bad `storeTimeoutMs` or `maxKeys` (ratekit's options), or a value that can only
 * fail (see {@link refuseWhatCanOnlyFail}: `id: 1`, `duration: NaN`, …).
 * @throws {TypeError} when `headers` is `null` (as koa-ratelimit).
 */
export function resolveCompatOptions<TContext>(options: Readonly<Record<string, unknown>>): CompatParams<TContext> {
  const unknown = Object.keys(options).filter((name) => !COMPAT_OPTIONS.has(name) && options[name] !== undefined);
  if (unknown.length > 0) {
    process.emitWarning(`ratelimit(): unknown option(s) ${unknown.map((n) => `\`${n}\``).join(', ')} ignored, as koa-ratelimit ignores them`, { code: 'RATEKIT_KOA_UNKNOWN_OPTION' });
  }
  refuseWhatCanOnlyFail(options);
  const max = (options.max ?? DEFAULTS.max) as number;
  const duration = (options.duration ?? DEFAULTS.duration) as number;
  const headers = (options.headers === undefined ? DEFAULT_HEADERS : options.headers) as Record<string, string | undefined>;
  // Destructured as upstream does, so `headers: null` throws the same TypeError.
  const { remaining = DEFAULT_HEADERS.remaining, reset = DEFAULT_HEADERS.reset, total = DEFAULT_HEADERS.total } = headers;
  return {
    driver: resolveDriver(options, max, duration),
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as the incumbent: it concatenates whatever value it is given
    namespace: options.namespace === undefined ? DEFAULTS.namespace : String(options.namespace),
    id: (options.id ?? ((ctx: { ip: string }) => ctx.ip)) as (ctx: TContext) => unknown,
    whitelist: typeof options.whitelist === 'function' ? (options.whitelist as (ctx: TContext) => unknown) : undefined,
    blacklist: typeof options.blacklist === 'function' ? (options.blacklist as (ctx: TContext) => unknown) : undefined,
    names: { remaining, reset, total },
    disableHeader: Boolean(options.disableHeader),
    errorMessage: options.errorMessage,
    status: options.status,
    throw: Boolean(options.throw),
    onLimited: typeof options.onLimited === 'function' ? (options.onLimited as (ctx: TContext) => unknown) : undefined,
  };
}

function resolveDriver(options: Readonly<Record<string, unknown>>, max: number, duration: number): Driver {
  const { db } = options;
  const driver = options.driver ?? (isIoRedis(db) ? 'redis' : 'memory');
  const storeTimeoutMs = resolveStoreTimeoutMs(options.storeTimeoutMs);
  if (driver === 'redis') {
    if (!isIoRedis(db)) throw new RateKitOptionError('db', "an ioredis client (Redis or Cluster) for driver 'redis'", db);
    // async-ratelimiter asserts both on every request: koa-ratelimit answers each one 500 without them.
    if (!max) throw new RateKitOptionError('max', "a positive number for driver 'redis'", max);
    if (!duration) throw new RateKitOptionError('duration', "a positive number of ms for driver 'redis'", duration);
    return new RedisDriver(db, max, duration, storeTimeoutMs);
  }
  if (driver === 'memory') {
    if (db !== undefined && !(db instanceof Map)) throw new RateKitOptionError('db', "a Map for driver 'memory'", db);
    return new MemoryDriver((db as Map<unknown, unknown> | undefined) ?? new Map(), max, duration, resolveMaxKeys(options.maxKeys));
  }
  throw new RateKitOptionError('driver', "'memory' or 'redis'", driver);
}

/** `maxKeys`: how many keys the memory driver's Map holds at most, a positive integer or `Infinity`. */
function resolveMaxKeys(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_KEYS;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RateKitOptionError('maxKeys', 'a positive integer, or Infinity for no bound', value);
  }
  return value;
}
