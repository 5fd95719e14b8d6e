/**
 * ExpressBruteFlexible: rate-limiter-flexible's replacement for express-brute (`lib/ExpressBruteFlexible`, the way
 * rlf's wiki documents out of express-brute), on this package's limiters.
 *
 * The rule, as rlf's: every key gets `freeRetries` requests within `lifetime` seconds; after that, each request waits
 * out a delay that grows as a Fibonacci sequence from `minWait` to `maxWait` ms. A request inside its delay goes to
 * `failCallback` with the time the next one may pass; one after it passes and lengthens the next delay. Three
 * limiters keep this, each under its own key prefix: `free` (the free requests), `block` (the current delay) and
 * `counter` (how many delays so far). Keys are SHA-256 hashes of the client's IP, the instance's name and the key,
 * as rlf makes them, so the data is rlf's on every store both support.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { RateLimiterAbstract } from './abstract.js';
import { RateLimiterCluster } from './cluster.js';
import { ERR_UNKNOWN_LIMITER_TYPE_MESSAGE, LIMITER_TYPES } from './constants.js';
import { RateLimiterMemcache } from './memcache.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterPostgres } from './postgres.js';
import { RateLimiterRedis } from './redis.js';
import { RateLimiterValkey } from './redis-variants.js';
import { RateLimiterMongo, RateLimiterMySQL, RateLimiterValkeyGlide } from './unsupported.js';

/** The Express request and response parts ExpressBruteFlexible uses. */
export interface BruteRequest {
  ip?: string;
  brute?: { reset: (callback?: (error?: unknown) => void) => void };
}
export interface BruteResponse {
  header(name: string, value: unknown): unknown;
  status(code: number): unknown;
  send(body: unknown): unknown;
  nextValidRequestDate?: Date;
}
export type BruteNext = (error?: unknown) => void;
/** Called for a request inside its delay, with the time the next request may pass. */
export type BruteFailCallback = (req: BruteRequest, res: BruteResponse, next: BruteNext, nextValidRequestDate: Date) => void;
/** What `handleStoreError` receives when a store call fails. */
export interface BruteStoreError {
  message: string;
  parent: unknown;
  req?: BruteRequest;
  res?: BruteResponse;
  next?: BruteNext;
  key?: string;
  ip?: string;
}

/** Options of {@link ExpressBruteFlexible}: express-brute's, and the store options of the limiters it builds. */
export interface ExpressBruteFlexibleOptions {
  /** Requests a key makes before its delays begin. @default 2 */
  freeRetries?: number;
  /** The first delay, in ms (at least 1). @default 500 */
  minWait?: number;
  /** The longest delay, in ms. @default 900_000 (15 minutes) */
  maxWait?: number;
  /** Seconds a key's counts are kept; by default long enough for every delay and free request. */
  lifetime?: number;
  /** Set `req.brute.reset(callback)`. @default true */
  attachResetToRequest?: boolean;
  /** @default ExpressBruteFlexible.FailTooManyRequests */
  failCallback?: BruteFailCallback;
  /** Called when a store call fails; by default it throws `{ message, parent }`, as express-brute's does. */
  handleStoreError?: (error: BruteStoreError) => void;
  /** Options for the limiters it builds (rlf's names). */
  storeClient?: unknown;
  storeType?: string;
  dbName?: string;
  tableName?: string;
  /** A key prefix for `prevent`'s limiters. */
  prefix?: string;
}

/** Options of {@link ExpressBruteFlexible.getMiddleware}. */
export interface BruteMiddlewareOptions {
  /** The key, or `(req, res, next) => next(key)`; the client's IP alone when absent. */
  key?: string | ((req: BruteRequest, res: BruteResponse, next: (key?: string) => void) => void);
  /** Leave the IP out of the key (one count for everyone with this key). */
  ignoreIP?: boolean;
  prefix?: string;
  failCallback?: BruteFailCallback;
}

type Limiter = Pick<RateLimiterAbstract, 'consume' | 'get' | 'penalty' | 'delete'>;
type LimiterClass = new (options: Record<string, unknown>) => Limiter;

/** The limiter class behind each type; the others fail in `getMiddleware`, as in rlf. */
const LIMITERS: Record<string, LimiterClass> = {
  [LIMITER_TYPES.MEMORY]: RateLimiterMemory as unknown as LimiterClass,
  [LIMITER_TYPES.CLUSTER]: RateLimiterCluster as unknown as LimiterClass,
  [LIMITER_TYPES.MEMCACHE]: RateLimiterMemcache as unknown as LimiterClass,
  [LIMITER_TYPES.MONGO]: RateLimiterMongo,
  [LIMITER_TYPES.MYSQL]: RateLimiterMySQL,
  [LIMITER_TYPES.POSTGRES]: RateLimiterPostgres as unknown as LimiterClass,
  [LIMITER_TYPES.VALKEY_GLIDE]: RateLimiterValkeyGlide,
  [LIMITER_TYPES.VALKEY]: RateLimiterValkey as unknown as LimiterClass,
  [LIMITER_TYPES.REDIS]: RateLimiterRedis as unknown as LimiterClass,
};

/** The delay before request `count` past the free ones: `delays[count - 1]`, or `maxWait` beyond them. */
function delayMs(count: number, delays: readonly number[], maxWait: number): number {
  return count >= 1 && count <= delays.length ? delays[count - 1]! : maxWait;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

function retryAfter(res: BruteResponse, nextValidRequestDate: Date): void {
  res.header('Retry-After', Math.ceil((nextValidRequestDate.getTime() - Date.now()) / 1000));
}

function refuse(status: number): BruteFailCallback {
  return (_req, res, _next, nextValidRequestDate) => {
    retryAfter(res, nextValidRequestDate);
    res.status(status);
    res.send({ error: { text: 'Too many requests in this time frame.', nextValidRequestDate } });
  };
}

/**
 * rlf's `ExpressBruteFlexible`, an express-brute replacement.
 *
 * @param limiterType - one of {@link LIMITER_TYPES}' values: `'memory'`, `'cluster'`, `'memcache'`, `'redis'`,
 *   `'valkey'` or `'postgres'` here (`'mongo'`, `'mysql'` and `'valkey-glide'` throw this package's unsupported-store
 *   error; `'dynamo'`, `'prisma'` and `'sqlite'` fail in `getMiddleware`, as in rlf)
 * @throws {Error} `ERR_UNKNOWN_LIMITER_TYPE_MESSAGE` for another `limiterType`
 * @example
 * ```js
 * const bruteforce = new ExpressBruteFlexible(ExpressBruteFlexible.LIMITER_TYPES.REDIS, { storeClient: redis, freeRetries: 5 });
 * app.post('/auth', bruteforce.prevent, (req, res) => { ... });
 * ```
 */
export class ExpressBruteFlexible {
  static LIMITER_TYPES = LIMITER_TYPES;
  static instanceCount = 0;
  /** Answers 429 with `Retry-After` and express-brute's JSON body. */
  static FailTooManyRequests: BruteFailCallback = refuse(429);
  /** Answers 403 with `Retry-After` and express-brute's JSON body. */
  static FailForbidden: BruteFailCallback = refuse(403);
  /** Sets 429, `Retry-After` and `res.nextValidRequestDate`, and calls `next()`. */
  static FailMark: BruteFailCallback = (_req, res, next, nextValidRequestDate) => {
    res.status(429);
    retryAfter(res, nextValidRequestDate);
    res.nextValidRequestDate = nextValidRequestDate;
    next();
  };
  static defaults: ExpressBruteFlexibleOptions = {
    freeRetries: 2,
    attachResetToRequest: true,
    minWait: 500,
    maxWait: 1000 * 60 * 15,
    failCallback: ExpressBruteFlexible.FailTooManyRequests,
    handleStoreError(error) {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- express-brute's documented default throws this object
      throw { message: error.message, parent: error.parent };
    },
  };

  /** The key hash of rlf: SHA-256 (base64) of the concatenated SHA-256 of each non-empty part. */
  static _getKey(parts: readonly (string | undefined)[]): string {
    let key = '';
    for (const part of parts) if (part) key += sha256(part);
    return sha256(key);
  }

  readonly name: string;
  readonly options: ExpressBruteFlexibleOptions & Required<Pick<ExpressBruteFlexibleOptions, 'freeRetries' | 'minWait' | 'maxWait' | 'lifetime'>>;
  readonly limiterType: string;
  /** The delays, in ms: Fibonacci from `minWait`, the last one `maxWait`. */
  readonly delays: number[];
  /** The middleware for the instance's own key (the client's IP). */
  readonly prevent: (req: BruteRequest, res: BruteResponse, next: BruteNext) => void;
  freeLimiter!: Limiter;
  blockLimiter!: Limiter;
  counterLimiter!: Limiter;

  constructor(limiterType: string, options?: ExpressBruteFlexibleOptions) {
    ExpressBruteFlexible.instanceCount++;
    this.name = `brute${ExpressBruteFlexible.instanceCount}`;
    const merged = { ...ExpressBruteFlexible.defaults, ...options } as ExpressBruteFlexibleOptions & { freeRetries: number; minWait: number; maxWait: number };
    if (merged.minWait < 1) merged.minWait = 1;
    if (!(Object.values(LIMITER_TYPES) as string[]).includes(limiterType)) throw new Error(ERR_UNKNOWN_LIMITER_TYPE_MESSAGE);
    this.limiterType = limiterType;
    const delays = [merged.minWait];
    while (delays[delays.length - 1]! < merged.maxWait) delays.push(delays[delays.length - 1]! + (delays.length > 1 ? delays[delays.length - 2]! : 0));
    delays[delays.length - 1] = merged.maxWait;
    this.delays = delays;
    const lifetime = merged.lifetime ?? Math.ceil((merged.maxWait / 1000) * (delays.length + merged.freeRetries));
    this.options = { ...merged, lifetime };
    this.prevent = this.getMiddleware({ prefix: this.options.prefix });
  }

  /**
   * A middleware for a key of your own (`options.key`), with its own limiters.
   * @throws {Error} `ERR_UNKNOWN_LIMITER_TYPE_MESSAGE` for a limiter type this class cannot build, as rlf does
   */
  getMiddleware(options: BruteMiddlewareOptions = {}): (req: BruteRequest, res: BruteResponse, next: BruteNext) => void {
    const prefix = options.prefix ?? '';
    const { storeClient, storeType, dbName, tableName, freeRetries, lifetime, maxWait } = this.options;
    const common = { storeClient, storeType, dbName, tableName };
    const Limiter = LIMITERS[this.limiterType];
    if (Limiter === undefined) throw new Error(ERR_UNKNOWN_LIMITER_TYPE_MESSAGE);
    this.freeLimiter = new Limiter({ ...common, keyPrefix: `${prefix}free`, points: freeRetries > 0 ? freeRetries - 1 : 0, duration: lifetime });
    this.blockLimiter = new Limiter({ ...common, keyPrefix: `${prefix}block`, points: 1, duration: Math.min(lifetime, Math.ceil(maxWait / 1000)) });
    this.counterLimiter = new Limiter({ ...common, keyPrefix: `${prefix}counter`, points: 1, duration: lifetime });
    const { freeLimiter, blockLimiter, counterLimiter } = this;
    const keyOf = typeof options.key === 'function' ? options.key : (_req: BruteRequest, _res: BruteResponse, next: (key?: string) => void) => next(options.key as string | undefined);

    return (req, res, next) => {
      const storeFailed = (parent: unknown) => this.options.handleStoreError?.({ req, res, next, message: 'Cannot increment request count', parent });
      const fail = (msBeforeNext: number) => {
        const failCallback = options.failCallback ?? this.options.failCallback;
        failCallback?.(req, res, next, new Date(Date.now() + msBeforeNext));
      };
      keyOf(req, res, (given) => {
        const key = ExpressBruteFlexible._getKey(options.ignoreIP ? [this.name, given] : [req.ip, this.name, given]);
        if (this.options.attachResetToRequest) this.#attachReset(req, key, [freeLimiter, blockLimiter, counterLimiter]);
        freeLimiter.consume(key).then(
          () => next(),
          () =>
            Promise.all([blockLimiter.get(key), counterLimiter.get(key)]).then(([blocked, counted]) => {
              if (blocked !== null) return fail(blocked.msBeforeNext);
              const waitMs = delayMs(counted ? counted.consumedPoints + 1 : 1, this.delays, maxWait);
              return blockLimiter.penalty(key, 1, { customDuration: Math.ceil(waitMs / 1000) }).then((block) => {
                if (block.consumedPoints !== 1) return fail(block.msBeforeNext);
                return counterLimiter.penalty(key).then(() => next(), storeFailed);
              }, storeFailed);
            }, storeFailed),
        );
      });
    };
  }

  /** Deletes the counts of `key` (and `ip`, when given), as express-brute's `reset`. */
  reset(ip: string | undefined, key: string | undefined, callback?: (error?: unknown) => void): void {
    const bruteKey = ExpressBruteFlexible._getKey(ip ? [ip, this.name, key] : [this.name, key]);
    Promise.all([this.freeLimiter.delete(bruteKey), this.blockLimiter.delete(bruteKey), this.counterLimiter.delete(bruteKey)]).then(
      () => {
        if (typeof callback === 'function') process.nextTick(callback);
      },
      (parent: unknown) => this.options.handleStoreError?.({ message: 'Cannot reset request count', parent, key, ip }),
    );
  }

  /** `req.brute.reset(callback)`: deletes this key's counts, after any reset an earlier middleware attached. */
  #attachReset(req: BruteRequest, key: string, limiters: readonly Limiter[]): void {
    const own = (callback?: (error?: unknown) => void) => {
      Promise.all(limiters.map((limiter) => limiter.delete(key))).then(
        () => {
          if (typeof callback === 'function') process.nextTick(() => callback());
        },
        (error: unknown) => {
          if (typeof callback === 'function') process.nextTick(() => callback(error));
        },
      );
    };
    const earlier = req.brute?.reset;
    req.brute = { reset: earlier === undefined ? own : (callback) => earlier(() => own(callback)) };
  }
}
