/**
 * What `Ratelimit` and `MultiRegionRatelimit` share, as in `@upstash/ratelimit` 2.2.0's base class:
 * `limit` with its timeout, deny lists (`enableProtection`) and analytics, `blockUntilReady`,
 * `getRemaining`, `resetUsedTokens` and the dynamic limit methods, over any algorithm context.
 *
 * @module
 */
import { type CoalescingOptions, MAX_TIMER_MS, RateKitOptionError, resolveCoalescing, type StoreCallBound, storeCallBound } from '@ratekit/core';
import { DYNAMIC_LIMIT_KEY_SUFFIX, NOTHING_PENDING } from './algorithm-support.js';
import { Analytics } from './analytics.js';
import { cachedDenial, cachedDeniedValue, checkDenyList, deniableValues, refreshIpDenyList } from './deny-list.js';
import { ipDenyListTtlMs } from './ip-deny-list-feed.js';
import { replacePending } from './policy.js';
import { isTcpClient, type ScriptRunner } from './script-runner.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm, LimitOptions, RatelimitResponse, RemainingTokens } from './types.js';

/** The default key prefix, the incumbent's. */
export const DEFAULT_PREFIX = '@upstash/ratelimit';

/** The options both classes take and check alike. */
export interface CommonOptions {
  prefix?: string;
  timeout?: number;
  dynamicLimits?: boolean;
  analytics?: boolean;
  enableProtection?: boolean;
  denyListThreshold?: number;
  now?: () => number;
  coalesce?: boolean;
}

/**
 * The `timeout` option: 5000 when absent; 0 or less turns it off (as the incumbent's `timeout > 0` test does).
 *
 * @throws {RateKitOptionError} for a value that is not a number, or is more than 2³¹ − 1 ms (`Infinity`
 *   included): the incumbent's timer would then fire after 1 ms (Node's overflow) and fail open nearly every
 *   request; for no timeout, pass 0
 */
function resolveTimeout(timeout: unknown): number {
  if (timeout === undefined) return 5000;
  if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout > MAX_TIMER_MS) {
    throw new RateKitOptionError('timeout', `a number of milliseconds, at most ${MAX_TIMER_MS} (what timers hold; 0 or less: no timeout)`, timeout);
  }
  return timeout;
}

/** `limit()`'s answer when its decision has not come within `timeout`: the incumbent's fail-open response. */
function failOpen(): RatelimitResponse {
  return { success: true, limit: 0, remaining: 0, reset: 0, pending: NOTHING_PENDING, reason: 'timeout' };
}

/** The incumbent's default level of the IP deny list feed. */
const DEFAULT_DENY_LIST_THRESHOLD = 6;

/**
 * Checks the options both classes share: the clock, analytics (it needs an `@upstash/redis`
 * client: `primaryRedis`, the client that also keeps the deny lists and the dynamic limit) and
 * the deny-list threshold.
 *
 * @throws {RateKitOptionError} for a `now` that is not a function; for `analytics: true` with an
 *   ioredis or node-redis client; for a `denyListThreshold` other than an integer from 1 to 8 with
 *   `enableProtection: true` (ratekit's check: the incumbent fails on each refresh instead); for a
 *   `coalesce` that is not a boolean
 */
export function commonOptions(config: CommonOptions, primaryRedis: unknown): { now: () => number; coalescing: CoalescingOptions } {
  const now = config.now ?? Date.now;
  if (typeof now !== 'function') throw new RateKitOptionError('now', 'a function returning Unix epoch milliseconds', now);
  if (config.analytics === true && isTcpClient(primaryRedis)) {
    throw new RateKitOptionError(
      'analytics',
      'false (or absent) when `redis` is an ioredis or node-redis client: analytics is recorded through @upstash/core-analytics, which needs an @upstash/redis client',
      true,
    );
  }
  const threshold = config.denyListThreshold;
  if (config.enableProtection === true && threshold !== undefined && !(Number.isInteger(threshold) && threshold >= 1 && threshold <= 8)) {
    throw new RateKitOptionError('denyListThreshold', 'an integer from 1 to 8 (a level of the IP deny list feed)', threshold);
  }
  const coalescing = resolveCoalescing({ coalesce: config.coalesce });
  return { now, coalescing };
}

/** The methods of a limiter over the algorithm context `TContext`. */
export abstract class RatelimitCore<TContext> {
  protected readonly limiter: Algorithm<TContext>;
  protected readonly ctx: TContext;
  protected readonly prefix: string;
  protected readonly timeout: number;
  protected readonly dynamicLimits: boolean;
  /** Sends scripts to the first (or only) database: dynamic limits and deny lists live there. */
  protected readonly primaryRun: ScriptRunner;
  /** Where each request is counted, with `analytics: true`. */
  protected readonly analytics: Analytics | undefined;
  /** Whether requests are checked against the deny lists. */
  protected readonly enableProtection: boolean;
  /** The level of the IP deny list feed downloaded when the list has expired. */
  protected readonly denyListThreshold: number;
  private readonly now: () => number;
  /** `limit()`'s timeout: one timer for every pending call (core's `storeCallBound`); undefined when `timeout` <= 0. */
  private readonly bounded: StoreCallBound | undefined;

  protected constructor(input: { limiter: Algorithm<TContext>; ctx: TContext; config: CommonOptions; primaryRun: ScriptRunner; primaryRedis: unknown; now: () => number }) {
    this.limiter = input.limiter;
    this.ctx = input.ctx;
    this.timeout = resolveTimeout(input.config.timeout);
    this.bounded = this.timeout > 0 ? storeCallBound(this.timeout, '@ratekit/upstash') : undefined;
    this.prefix = input.config.prefix ?? DEFAULT_PREFIX;
    this.dynamicLimits = input.config.dynamicLimits ?? false;
    this.primaryRun = input.primaryRun;
    this.now = input.now;
    this.enableProtection = input.config.enableProtection ?? false;
    this.denyListThreshold = input.config.denyListThreshold ?? DEFAULT_DENY_LIST_THRESHOLD;
    this.analytics = input.config.analytics === true ? new Analytics({ redis: input.primaryRedis, prefix: this.prefix, now: input.now }) : undefined;
  }

  /**
   * Whether a request of `identifier` may pass. Resolves with the incumbent's response; never
   * rejects on a refusal (only on a Redis error before the timeout).
   *
   * With `enableProtection`, `identifier` and `req.ip`, `req.userAgent`, `req.country` are checked
   * against `<prefix>:denyList:all` in the same round trip as the decision: a listed value gives
   * `{ success: false, remaining: 0, reason: 'denyList', deniedValue }`, and is then refused for a
   * minute from a process-wide cache without Redis (`limit: 0, reset: 0`). When the IP list has
   * expired, one instance downloads it again in `pending`. With `analytics`, the request is counted
   * in `pending` (`req.geo` adds where it came from).
   *
   * @param identifier - whose requests are counted (a user id, an IP, an API key)
   * @param req - `rate`: tokens this request takes (default 1; negative refunds); `ip`, `userAgent`, `country`: checked against the deny lists; `geo`: recorded by analytics
   * @example
   * ```ts
   * const { success, reason, pending } = await ratelimit.limit(userId, { rate: 2, ip });
   * context.waitUntil(pending);
   * ```
   */
  limit = (identifier: string, req?: LimitOptions): Promise<RatelimitResponse> => {
    // Promises chained, not an async function: a decision on the hot path makes no promise of its own.
    let decision: Promise<RatelimitResponse>;
    try {
      decision = this.decide(identifier, req);
    } catch (error) {
      return Promise.reject(error);
    }
    // The decision's own failure rejects limit(), as the incumbent's race does; the timeout fails open.
    if (this.bounded !== undefined) decision = this.bounded(decision, undefined, undefined, failOpen);
    return this.analytics === undefined ? decision : decision.then((response) => this.recordAnalytics(response, identifier, req));
  };

  /**
   * Calls {@link limit} until a request passes or `timeout` ms have passed, waiting with a timer
   * for each refusal's `reset` (at least 100 ms when that is already past), as the incumbent does;
   * when `reset` is past the deadline it waits until the deadline and resolves with that refusal.
   *
   * The time spent is the larger of the clock's (`Date.now()`) and the timers' total, so the loop
   * ends at its deadline on a runtime whose clock stands still between I/O (Cloudflare Workers:
   * `Date.now()` is the time of the last I/O, upstash/ratelimit-js #70), and never spins on it.
   *
   * @param identifier - as for `limit`
   * @param timeout - the most to wait, ms
   * @throws {Error} `timeout must be positive` when `timeout <= 0`; `This should not happen` on a refusal with `reset` 0
   * @example
   * ```ts
   * const { success } = await ratelimit.blockUntilReady(userId, 30_000); // false: still refused after 30 s
   * ```
   */
  blockUntilReady = async (identifier: string, timeout: number): Promise<RatelimitResponse> => {
    if (timeout <= 0) throw new Error('timeout must be positive');
    const started = Date.now();
    let waited = 0; // the timers' total, ms
    for (;;) {
      const response = await this.limit(identifier);
      if (response.success) return response;
      if (response.reset === 0) throw new Error('This should not happen');
      const now = Date.now();
      const left = timeout - Math.max(waited, now - started);
      if (left <= 0) return response;
      const untilReset = response.reset - now;
      const wait = Math.min(untilReset > 0 ? untilReset : 100, left);
      await new Promise((resolve) => setTimeout(resolve, wait));
      waited += wait;
      if (wait === left) return response; // waited until the deadline: the incumbent does not ask again
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
    await this.primaryRun(SCRIPTS.dynamicLimit, [key], options.limit === false ? ['del'] : ['set', String(options.limit)]);
  };

  /**
   * The global dynamic limit, or `null` when none is set.
   *
   * @throws {Error} when the limiter was built without `dynamicLimits: true` (the incumbent's message)
   */
  getDynamicLimit = async (): Promise<{ dynamicLimit: number | null }> => {
    const key = this.dynamicLimitKey('getDynamicLimit');
    const value = await this.primaryRun(SCRIPTS.dynamicLimit, [key], ['get']);
    return { dynamicLimit: value === null || value === undefined ? null : Number(value) };
  };

  /** The algorithm's decision, and with `enableProtection` the deny lists'. */
  private decide(identifier: string, req: LimitOptions | undefined): Promise<RatelimitResponse> {
    const key = this.key(identifier);
    return this.enableProtection ? this.decideWithDenyLists(key, identifier, req) : this.limiter().limit(this.ctx, key, req?.rate);
  }

  /** The incumbent's order: the cache of denied values, then the algorithm and the deny-list check in parallel. */
  private async decideWithDenyLists(key: string, identifier: string, req: LimitOptions | undefined): Promise<RatelimitResponse> {
    const members = deniableValues(identifier, req);
    const nowMs = this.now();
    const cached = cachedDeniedValue(members, nowMs);
    if (cached !== undefined) return cachedDenial(cached);
    const [response, denyList] = await Promise.all([this.limiter().limit(this.ctx, key, req?.rate), checkDenyList(this.primaryRun, this.prefix, members, nowMs)]);
    // The response object is changed in place: it keeps its policy for rateLimitHeaders().
    if (denyList.deniedValue !== undefined) {
      response.success = false;
      response.remaining = 0;
      response.reason = 'denyList';
      response.deniedValue = denyList.deniedValue;
    }
    if (denyList.invalidIpDenyList) {
      const refresh = refreshIpDenyList(this.primaryRun, this.prefix, this.denyListThreshold, ipDenyListTtlMs(nowMs));
      const pending = Promise.all([response.pending, refresh]);
      // `pending` rejects for whoever awaits it, as the incumbent's; unawaited, a failed download
      // (offline, GitHub down) warns instead of being an unhandled rejection. It is retried once the
      // status key's 30 s `pending` mark has expired.
      pending.catch((error: unknown) => console.warn('@ratekit/upstash: the IP deny list was not refreshed (retried in 30 s):', error));
      replacePending(response, pending);
    }
    return response;
  }

  /** Counts the answered request in analytics, in `pending` (a failure warns, as in the incumbent). */
  private recordAnalytics(response: RatelimitResponse, identifier: string, req: LimitOptions | undefined): RatelimitResponse {
    if (this.analytics === undefined) return response;
    const denied = response.reason === 'denyList';
    const geo = req === undefined ? undefined : this.analytics.extractGeo(req);
    // The event's fields in the incumbent's order: their JSON is the member counted in Redis.
    const recorded = this.analytics
      .record({ identifier: denied ? (response.deniedValue ?? identifier) : identifier, time: this.now(), success: denied ? 'denied' : response.success, ...geo })
      .catch((error: unknown) => console.warn('Failed to record analytics', error));
    replacePending(response, Promise.all([response.pending, recorded]));
    return response;
  }

  private key(identifier: string): string {
    return `${this.prefix}:${identifier}`;
  }

  private dynamicLimitKey(method: string): string {
    if (!this.dynamicLimits) throw new Error(`dynamicLimits must be enabled in the Ratelimit constructor to use ${method}()`);
    return `${this.prefix}${DYNAMIC_LIMIT_KEY_SUFFIX}`;
  }
}
