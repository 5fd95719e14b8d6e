/**
 * `Ratelimit`, the class of `@upstash/ratelimit` 2.2.0 (its `RegionRatelimit`): the same
 * constructor options, static algorithms, methods and responses, on the same Redis keys.
 *
 * @module
 */
import { RateKitOptionError } from '@ratekit/core';
import { DYNAMIC_LIMIT_KEY_SUFFIX } from './algorithm-support.js';
import { ephemeralCache } from './cache.js';
import { cachedFixedWindow } from './cached-fixed-window.js';
import { fixedWindow } from './fixed-window.js';
import { scriptRunner, type ScriptRunner } from './script-runner.js';
import { SCRIPTS } from './scripts.js';
import { slidingWindow } from './sliding-window.js';
import { tokenBucket } from './token-bucket.js';
import type { Algorithm, LimitOptions, RatelimitResponse, RegionContext, RemainingTokens } from './types.js';

/** The default key prefix, the incumbent's. */
export const DEFAULT_PREFIX = '@upstash/ratelimit';

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
  /** Not supported by this package: `true` throws. */
  analytics?: boolean;
  /** Not supported by this package (deny lists): `true` throws. */
  enableProtection?: boolean;
  /** Deny lists' threshold: ignored (no deny lists). */
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
}

/**
 * A rate limiter on Redis, the drop-in for `@upstash/ratelimit`'s `Ratelimit`.
 *
 * Every decision is one script call (EVALSHA, EVAL on `NOSCRIPT`) writing the incumbent's keys,
 * values and TTLs, so instances of both may limit one identifier together. The scripts have no
 * `allow-key-locking` flag and run on open-source Redis 7.0 as well as Upstash.
 *
 * @throws {Error} at construction, for `analytics: true` or `enableProtection: true` (not built here)
 * @throws {RateKitOptionError} at construction, for a `clock` other than `'caller'`/`'server'` or a `now` that is not a function
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis';
 * import { Ratelimit } from '@ratekit/upstash';
 *
 * const ratelimit = new Ratelimit({ redis: Redis.fromEnv(), limiter: Ratelimit.slidingWindow(10, '10 s') });
 * const { success, remaining, reset } = await ratelimit.limit('user:1');
 * ```
 */
export class Ratelimit {
  /** A fixed window: see {@link fixedWindow}. */
  static fixedWindow = fixedWindow;
  /** A sliding window: see {@link slidingWindow}. */
  static slidingWindow = slidingWindow;
  /** A token bucket: see {@link tokenBucket}. */
  static tokenBucket = tokenBucket;
  /** The experimental cached fixed window: see {@link cachedFixedWindow}. */
  static cachedFixedWindow = cachedFixedWindow;

  protected readonly limiter: Algorithm;
  protected readonly ctx: RegionContext;
  protected readonly prefix: string;
  protected readonly timeout: number;
  protected readonly dynamicLimits: boolean;

  constructor(config: RatelimitConfig) {
    if (config.analytics === true) throw new Error('@ratekit/upstash does not record analytics: remove `analytics: true` (or keep @upstash/ratelimit for it)');
    if (config.enableProtection === true) throw new Error('@ratekit/upstash has no deny lists: remove `enableProtection: true` (or keep @upstash/ratelimit for it)');
    const clock = config.clock ?? 'caller';
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value
    if (clock !== 'caller' && clock !== 'server') throw new RateKitOptionError('clock', "'caller' or 'server'", clock);
    const now = config.now ?? Date.now;

    if (typeof now !== 'function') throw new RateKitOptionError('now', 'a function returning Unix epoch milliseconds', now);
    this.limiter = config.limiter;
    this.timeout = config.timeout ?? 5000;
    this.prefix = config.prefix ?? DEFAULT_PREFIX;
    this.dynamicLimits = config.dynamicLimits ?? false;
    const cache = config.ephemeralCache === false ? undefined : ephemeralCache(config.ephemeralCache instanceof Map ? config.ephemeralCache : new Map<string, number>(), now);
    this.ctx = { redis: config.redis, cache, dynamicLimits: this.dynamicLimits, prefix: this.prefix, run: lazyRunner(config.redis), now, clock };
  }

  /**
   * Whether a request of `identifier` may pass. Resolves with the incumbent's response; never
   * rejects on a refusal (only on a Redis error before the timeout).
   *
   * @param identifier - whose requests are counted (a user id, an IP, an API key)
   * @param req - `rate`: tokens this request takes (default 1; negative refunds)
   * @example
   * ```ts
   * const { success } = await ratelimit.limit(ip, { rate: 2 });
   * ```
   */
  limit = async (identifier: string, req?: LimitOptions): Promise<RatelimitResponse> => {
    const decision = this.limiter().limit(this.ctx, this.key(identifier), req?.rate);
    if (this.timeout <= 0) return decision;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<RatelimitResponse>((resolve) => {
      timer = setTimeout(() => resolve({ success: true, limit: 0, remaining: 0, reset: 0, pending: Promise.resolve(), reason: 'timeout' }), this.timeout);
    });
    try {
      return await Promise.race([decision, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };

  /**
   * Calls {@link limit} until a request passes or `timeout` ms have passed, waiting for each
   * refusal's `reset` (at least 100 ms when that is already past), as the incumbent does.
   *
   * @param identifier - as for `limit`
   * @param timeout - the most to wait, ms
   * @throws {Error} `timeout must be positive` when `timeout <= 0`; `This should not happen` on a refusal with `reset` 0
   */
  blockUntilReady = async (identifier: string, timeout: number): Promise<RatelimitResponse> => {
    if (timeout <= 0) throw new Error('timeout must be positive');
    const deadline = Date.now() + timeout;
    for (;;) {
      const response = await this.limit(identifier);
      if (response.success) return response;
      if (response.reset === 0) throw new Error('This should not happen');
      const wait = Math.min(response.reset, deadline) - Date.now();
      await new Promise((resolve) => setTimeout(resolve, wait > 0 ? wait : 100));
      if (Date.now() > deadline) return response;
    }
  };

  /** Deletes `identifier`'s counters (every window, or the bucket) and its ephemeral-cache entry. */
  resetUsedTokens = async (identifier: string): Promise<void> => {
    await this.limiter().resetTokens(this.ctx, this.key(identifier));
  };

  /** The tokens `identifier` has left, when they reset, and the limit in force; changes nothing. */
  getRemaining = async (identifier: string): Promise<RemainingTokens> => this.limiter().getRemaining(this.ctx, this.key(identifier));

  /**
   * Sets (a number) or removes (`false`) the global dynamic limit, `<prefix>:dynamic:global`.
   *
   * @throws {Error} when the limiter was built without `dynamicLimits: true` (the incumbent's message)
   */
  setDynamicLimit = async (options: { limit: number | false }): Promise<void> => {
    const key = this.dynamicLimitKey('setDynamicLimit');
    await this.ctx.run(SCRIPTS.dynamicLimit, [key], options.limit === false ? ['del'] : ['set', String(options.limit)]);
  };

  /**
   * The global dynamic limit, or `null` when none is set.
   *
   * @throws {Error} when the limiter was built without `dynamicLimits: true` (the incumbent's message)
   */
  getDynamicLimit = async (): Promise<{ dynamicLimit: number | null }> => {
    const key = this.dynamicLimitKey('getDynamicLimit');
    const value = await this.ctx.run(SCRIPTS.dynamicLimit, [key], ['get']);
    return { dynamicLimit: value === null || value === undefined ? null : Number(value) };
  };

  private key(identifier: string): string {
    return `${this.prefix}:${identifier}`;
  }

  private dynamicLimitKey(method: string): string {
    if (!this.dynamicLimits) throw new Error(`dynamicLimits must be enabled in the Ratelimit constructor to use ${method}()`);
    return `${this.prefix}${DYNAMIC_LIMIT_KEY_SUFFIX}`;
  }
}

/** The runner for `client`, found on first use; an unknown client rejects every call, as the incumbent fails on its first. */
function lazyRunner(client: unknown): ScriptRunner {
  let runner: ScriptRunner | undefined;
  return (script, keys, args) => {
    runner ??= scriptRunner(client);
    if (runner === undefined) {
      return Promise.reject(new TypeError('redis: expected an @upstash/redis client, an ioredis client or a node-redis 4+ client'));
    }
    return runner(script, keys, args);
  };
}
