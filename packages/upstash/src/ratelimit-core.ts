/**
 * What `Ratelimit` and `MultiRegionRatelimit` share, as in `@upstash/ratelimit` 2.2.0's base class:
 * `limit` with its timeout, `blockUntilReady`, `getRemaining`, `resetUsedTokens` and the dynamic
 * limit methods, over any algorithm context.
 *
 * @module
 */
import { type CoalescingOptions, RateKitOptionError, resolveCoalescing } from '@ratekit/core';
import { DYNAMIC_LIMIT_KEY_SUFFIX } from './algorithm-support.js';
import type { ScriptRunner } from './script-runner.js';
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
  now?: () => number;
  coalesce?: boolean;
}

/**
 * Checks the options neither class builds, and the clock.
 *
 * @throws {Error} for `analytics: true` or `enableProtection: true`
 * @throws {RateKitOptionError} for a `now` that is not a function, or a `coalesce` that is not a boolean
 */
export function commonOptions(config: CommonOptions): { now: () => number; coalescing: CoalescingOptions } {
  if (config.analytics === true) throw new Error('@ratekit/upstash does not record analytics: remove `analytics: true` (or keep @upstash/ratelimit for it)');
  if (config.enableProtection === true) throw new Error('@ratekit/upstash has no deny lists: remove `enableProtection: true` (or keep @upstash/ratelimit for it)');
  const now = config.now ?? Date.now;

  if (typeof now !== 'function') throw new RateKitOptionError('now', 'a function returning Unix epoch milliseconds', now);
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
  /** Sends scripts to the first (or only) database: dynamic limits live there. */
  protected readonly primaryRun: ScriptRunner;

  protected constructor(input: { limiter: Algorithm<TContext>; ctx: TContext; config: CommonOptions; primaryRun: ScriptRunner }) {
    this.limiter = input.limiter;
    this.ctx = input.ctx;
    this.timeout = input.config.timeout ?? 5000;
    this.prefix = input.config.prefix ?? DEFAULT_PREFIX;
    this.dynamicLimits = input.config.dynamicLimits ?? false;
    this.primaryRun = input.primaryRun;
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

  private key(identifier: string): string {
    return `${this.prefix}:${identifier}`;
  }

  private dynamicLimitKey(method: string): string {
    if (!this.dynamicLimits) throw new Error(`dynamicLimits must be enabled in the Ratelimit constructor to use ${method}()`);
    return `${this.prefix}${DYNAMIC_LIMIT_KEY_SUFFIX}`;
  }
}
