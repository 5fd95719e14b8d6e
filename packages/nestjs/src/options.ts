import type { ExecutionContext, FactoryProvider, ModuleMetadata, Type } from '@nestjs/common';
import type { AlgorithmName, RateLimitStore, StandardHeaders, StoreErrorPolicy } from '@ratekit/core';
import type { ThrottlerStorage } from './storage.js';
import type { ThrottlerLimitDetail } from './guard-types.js';

/** A value, or a function of the request's execution context returning it (sync or async). */
export type Resolvable<T extends number | string | boolean> = T | ((context: ExecutionContext) => T | Promise<T>);

/**
 * A platform's request or response (Express's `req` and `res`, Fastify's request and reply, a
 * GraphQL or WebSocket context's), typed as @nestjs/throttler types it, so that `getTracker`
 * functions and `getRequestResponse` overrides read their platform's fields as they do upstream.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- @nestjs/throttler's public type: with `unknown`, users' getTracker functions (req.headers['x-user']) would no longer compile
export type ThrottlerHttpObject = Record<string, any>;

/** Returns the tracker (who is counted) of a request: by default its IP (`req.ip`). */
export type ThrottlerGetTrackerFunction = (req: ThrottlerHttpObject, context: ExecutionContext) => Promise<string> | string;

/** Returns the storage key of a tracker for one throttler on one route. */
export type ThrottlerGenerateKeyFunction = (context: ExecutionContext, trackerString: string, throttlerName: string) => string;

/**
 * ratekit's own options of one throttler. Any of them, on a throttler or on the module, switches the
 * guard to the ratekit mode (see {@link RateKitModuleOptions}).
 */
export interface RateKitThrottlerOptions {
  /**
   * The algorithm counting this throttler (see `@ratekit/core`'s `LimitOptions.algorithm`).
   * @default the module's `algorithm`, else 'fixed-window'
   */
  algorithm?: AlgorithmName;
  /** Bucket capacity for `token-bucket`, `gcra` and `delay`. @default `limit` */
  burst?: number;
  /**
   * ratekit's block, in ms: once this throttler refuses, the tracker stays refused by it for this
   * long. Unlike @nestjs/throttler's `blockDuration`, the window's count is kept through the block
   * (a block never hands back budget). Used instead of `blockDuration` in the ratekit mode.
   */
  blockDurationMs?: number;
}

/** One throttler: `limit` requests per `ttl` ms, as @nestjs/throttler's `ThrottlerOptions`. */
export interface ThrottlerOptions extends RateKitThrottlerOptions {
  /**
   * The throttler's name, `default` when left out. Headers of a throttler not named `default` end
   * in `-<name>` (`X-RateLimit-Remaining-long`).
   */
  name?: string;
  /** How many requests are allowed per `ttl`. */
  limit: Resolvable<number>;
  /** The window, in milliseconds. */
  ttl: Resolvable<number>;
  /**
   * How long, in ms, a tracker is refused once it goes over the limit (@nestjs/throttler's
   * `blockDuration`; when the block ends the count starts again from zero). @default ttl
   */
  blockDuration?: Resolvable<number>;
  /** Requests whose `User-Agent` matches one of these are not throttled. */
  ignoreUserAgents?: RegExp[];
  /** Skips this throttler when it returns true. */
  skipIf?: (context: ExecutionContext) => boolean;
  /** Overrides the guard's `getTracker` for this throttler. */
  getTracker?: ThrottlerGetTrackerFunction;
  /** Overrides the guard's `generateKey` for this throttler. */
  generateKey?: ThrottlerGenerateKeyFunction;
  /** Whether to send the `X-RateLimit-*` and `Retry-After` headers. @default true */
  setHeaders?: boolean;
}

/**
 * ratekit's own module options. Giving any of `store`, `algorithm`, `cost`, `standardHeaders`,
 * `onStoreError`, `storeTimeoutMs` or `policy: 'all-or-nothing'` (or `algorithm`, `burst` or
 * `blockDurationMs` on a throttler) turns on the **ratekit mode**: the named throttlers of a route
 * are one all-or-nothing policy, decided in one store call (a refusal charges no throttler), on
 * ratekit's algorithms and store. Without them the guard is @nestjs/throttler's, step for step.
 */
export interface RateKitModuleOptions {
  /**
   * How the named throttlers of a route are decided:
   * - `each`: one storage call per throttler, in order of `ttl`, stopping at the first refusal
   *   (@nestjs/throttler's way: the throttlers before the refusing one have been charged);
   * - `all-or-nothing`: one policy, one store call; the request passes only if every throttler
   *   admits it, and a refusal charges none of them.
   * @default 'each', or 'all-or-nothing' when any other ratekit option is given
   */
  policy?: 'each' | 'all-or-nothing';
  /** The ratekit store in the ratekit mode: `memoryStore()`, `redisStore()`, `postgresStore()`… @default a bounded `memoryStore()` */
  store?: RateLimitStore;
  /** The default algorithm of every throttler in the ratekit mode. @default 'fixed-window' */
  algorithm?: AlgorithmName;
  /** The cost of a request, or a function of its execution context. @default 1 */
  cost?: number | ((context: ExecutionContext) => number);
  /**
   * IETF RateLimit headers to send besides the `X-RateLimit-*-<name>` ones: `'draft-6'`,
   * `'draft-7'`, `'draft-8'` (every throttler of the route in one field), or `false`.
   * @default false
   */
  standardHeaders?: StandardHeaders;
  /** What a failing or timed-out store call turns into (see `@ratekit/core`). @default 'throw' */
  onStoreError?: StoreErrorPolicy;
  /** The longest a store call may take, in ms. @default 1_000 */
  storeTimeoutMs?: number;
  /**
   * Groups IPv6 trackers by this prefix length (`2001:db8:1234:5600::/56`), since one IPv6 client
   * usually holds a whole /64 or more; `false` keeps addresses whole. Applies to the default
   * `getTracker` (`req.ip`). @default false in @nestjs/throttler's mode (as it does), 56 in the ratekit mode
   */
  ipv6SubnetPrefix?: number | false;
}

/** The module's options: a list of throttlers, or an object with the throttlers and common options. */
export type ThrottlerModuleOptions =
  | Array<ThrottlerOptions>
  | ({
      /** Requests whose `User-Agent` matches one of these are not throttled. */
      ignoreUserAgents?: RegExp[];
      /** Skips throttling when it returns true. */
      skipIf?: (context: ExecutionContext) => boolean;
      /** Overrides the guard's `getTracker`. */
      getTracker?: ThrottlerGetTrackerFunction;
      /** Overrides the guard's `generateKey`. */
      generateKey?: ThrottlerGenerateKeyFunction;
      /** The 429 message, or a function of the context and the refusing throttler's detail. */
      errorMessage?: string | ((context: ExecutionContext, throttlerLimitDetail: ThrottlerLimitDetail) => string);
      /** A @nestjs/throttler storage (`increment()`), e.g. `new ThrottlerStorageService(redisStore(...))`. @default a bounded in-memory `ThrottlerStorageService` */
      storage?: ThrottlerStorage;
      /** The named throttlers. */
      throttlers: Array<ThrottlerOptions>;
      /** Whether to send the `X-RateLimit-*` and `Retry-After` headers. @default true */
      setHeaders?: boolean;
    } & RateKitModuleOptions);

/** A class that makes the module's options (`forRootAsync({ useClass })`). */
export interface ThrottlerOptionsFactory {
  createThrottlerOptions(): Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions;
}

/** Options of `ThrottlerModule.forRootAsync`. */
export interface ThrottlerAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useExisting?: Type<ThrottlerOptionsFactory>;
  useClass?: Type<ThrottlerOptionsFactory>;
  /** Makes the options from the providers listed in `inject` (Nest's factory provider). */
  useFactory?: FactoryProvider<Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions>['useFactory'];
  inject?: FactoryProvider['inject'];
}
