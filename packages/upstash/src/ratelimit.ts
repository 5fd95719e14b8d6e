/**
 * `Ratelimit`, the class of `@upstash/ratelimit` 2.2.0 (its `RegionRatelimit`): the same
 * constructor options, static algorithms, methods and responses, on the same Redis keys.
 *
 * @module
 */
import { RateKitOptionError } from '@ratekit/core';
import { ephemeralCache } from './cache.js';
import { cachedFixedWindow } from './cached-fixed-window.js';
import { fixedWindow } from './fixed-window.js';
import { commonOptions, DEFAULT_PREFIX, RatelimitCore } from './ratelimit-core.js';
import { lazyRunner } from './script-runner.js';
import { slidingWindow } from './sliding-window.js';
import { tokenBucket } from './token-bucket.js';
import type { Algorithm, RegionContext } from './types.js';

export { DEFAULT_PREFIX };

/** Options of {@link Ratelimit}: `@upstash/ratelimit`'s, plus `clock` and `now`. */
export interface RatelimitConfig {
  /**
   * The Redis client: an `@upstash/redis` client (HTTP; `Redis.fromEnv()`), an ioredis client,
   * or a node-redis 4+ client, connected (TCP).
   */
  redis: unknown;
  /** The algorithm: `Ratelimit.fixedWindow`, `slidingWindow`, `tokenBucket` or `cachedFixedWindow`. */
  limiter: Algorithm;
  /** Prepended to every key, with `:`. @default '@upstash/ratelimit' */
  prefix?: string;
  /**
   * The Map that remembers refused identifiers until their reset (and `cachedFixedWindow`'s
   * counts); `false` for none. Created per instance when absent.
   */
  ephemeralCache?: Map<string, number> | false;
  /**
   * Milliseconds to wait for Redis before answering `{ success: true, limit: 0, remaining: 0,
   * reset: 0, reason: 'timeout' }` (failing open); 0 waits without limit. @default 5000
   */
  timeout?: number;
  /** Read the limit from `<prefix>:dynamic:global` when set (`setDynamicLimit`). @default false */
  dynamicLimits?: boolean;
  /**
   * Count every request in `<prefix>:events:<hour>` through `@upstash/core-analytics`, as the
   * incumbent does (the Upstash console reads them; so does {@link Analytics}). Needs an
   * `@upstash/redis` client. @default false
   */
  analytics?: boolean;
  /**
   * Refuse requests whose identifier, `ip`, `userAgent` or `country` is in the deny lists
   * (`<prefix>:denyList:all`, edited in the Upstash console or with SADD), with
   * `reason: 'denyList'`; also keeps the public IP deny list loaded (see `denyListThreshold`).
   * @default false
   */
  enableProtection?: boolean;
  /**
   * The level of the public IP deny list feed loaded with `enableProtection`: an integer from 1
   * (IPs on at least one of its blacklists: the most) to 8 (the fewest). @default 6
   */
  denyListThreshold?: number;
  /** `@upstash/redis` telemetry: ignored (this package sends none). */
  enableTelemetry?: boolean;
  /** Ignored since `@upstash/ratelimit` 2.0.3, and here. */
  cacheScripts?: boolean;
  /**
   * ratekit's addition. Whose clock `slidingWindow` and `tokenBucket` use: `caller` (the
   * incumbent's behaviour: `now()`, `Date.now()` by default, sent to the script) or `server`
   * (Redis `TIME` inside the script, so instances whose clocks disagree still count alike).
   * Fixed windows always use the caller's clock. @default 'caller'
   */
  clock?: 'caller' | 'server';
  /** ratekit's addition: the caller's clock, Unix epoch ms. @default Date.now */
  now?: () => number;
  /**
   * ratekit's addition, for an ioredis or node-redis client (TCP): the script calls asked in one
   * iteration of the event loop go to Redis as one call, as `@ratekit/redis` coalesces its
   * decisions; every reply is the one the call would get alone (packages/upstash/README.md).
   * Ignored for an `@upstash/redis` client. @default true
   */
  coalesce?: boolean;
}

/**
 * A rate limiter on Redis, the drop-in for `@upstash/ratelimit`'s `Ratelimit`.
 *
 * Every decision is one script call (EVALSHA, EVAL on `NOSCRIPT`) writing the incumbent's keys,
 * values and TTLs, so instances of both may limit one identifier together. The scripts have no
 * `allow-key-locking` flag and run on open-source Redis 7.0 as well as Upstash.
 *
 * @throws {RateKitOptionError} at construction, for a `clock` other than `'caller'`/`'server'`, a `now` that is not a
 *   function, `analytics: true` with an ioredis or node-redis client, or a `denyListThreshold` outside 1-8 with `enableProtection`
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis';
 * import { Ratelimit } from '@ratekit/upstash';
 *
 * const ratelimit = new Ratelimit({ redis: Redis.fromEnv(), limiter: Ratelimit.slidingWindow(10, '10 s') });
 * const { success, remaining, reset } = await ratelimit.limit('user:1');
 * ```
 */
export class Ratelimit extends RatelimitCore<RegionContext> {
  /** A fixed window: see {@link fixedWindow}. */
  static fixedWindow = fixedWindow;
  /** A sliding window: see {@link slidingWindow}. */
  static slidingWindow = slidingWindow;
  /** A token bucket: see {@link tokenBucket}. */
  static tokenBucket = tokenBucket;
  /** The experimental cached fixed window: see {@link cachedFixedWindow}. */
  static cachedFixedWindow = cachedFixedWindow;

  constructor(config: RatelimitConfig) {
    const { now, coalescing } = commonOptions(config, config.redis);
    const clock = config.clock ?? 'caller';
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value
    if (clock !== 'caller' && clock !== 'server') throw new RateKitOptionError('clock', "'caller' or 'server'", clock);
    const cache = config.ephemeralCache === false ? undefined : ephemeralCache(config.ephemeralCache instanceof Map ? config.ephemeralCache : new Map<string, number>(), now);
    const run = lazyRunner(config.redis, coalescing);
    const ctx: RegionContext = { redis: config.redis, cache, dynamicLimits: config.dynamicLimits ?? false, prefix: config.prefix ?? DEFAULT_PREFIX, run, now, clock };
    super({ limiter: config.limiter, ctx, config, primaryRun: run, primaryRedis: config.redis, now });
  }
}
