/**
 * ratekit mode's options: core's `GateOptions` (documented and checked there when the middleware
 * is built), Hono's `getConnInfo`, and hono-rate-limiter's (incumbent-options.ts). Each bad
 * option throws a `RateKitOptionError` (code `ERR_RATEKIT_INVALID_OPTION`) naming it.
 *
 * @module
 */
import { assertFunction, type GateOptions, RateKitOptionError, type RefundOptions, resolveRefundOptions } from '@ratekit/core';
import type { Context } from 'hono';
import { HONO_RATE_LIMITER_OPTIONS, type HonoRateLimiterOptions } from './incumbent-options.js';

/** The part of Hono's `ConnInfo` the default key needs (`hono/conninfo`'s type). */
export interface ConnInfoLike {
  remote: { address?: string | undefined };
}

/** Hono's `getConnInfo` for a runtime: `import { getConnInfo } from 'hono/bun'`, etc. */
export type GetConnInfo = (c: Context) => ConnInfoLike;

/** Options of `rateLimit`: every `GateOptions` of @ratekit/core over Hono's `Context`, `getConnInfo` and hono-rate-limiter's. */
export interface RateLimitOptions<TContext extends Context = Context> extends GateOptions<TContext, Response>, HonoRateLimiterOptions<TContext> {
  /**
   * Hono's `getConnInfo` for the runtime the app runs on: from `hono/bun`, `hono/deno`,
   * `hono/cloudflare-workers` or `@hono/node-server/conninfo`. The default key reads the client
   * address from it (on Workers, `cf-connecting-ip`, which Cloudflare's edge sets). Required when
   * `keyGenerator` is not given: there is no fall-back to a header a client can write.
   */
  getConnInfo?: GetConnInfo;
}

/** The names Hono adds to the gate's. */
export const HONO_OPTIONS = ['getConnInfo', ...HONO_RATE_LIMITER_OPTIONS] as const;

/**
 * Checks Hono's own options.
 * @returns hono-rate-limiter's options, checked by core's `resolveRefundOptions`, with their defaults
 * @throws {RateKitOptionError} naming the option
 */
export function resolveHonoOptions<TContext extends Context>(options: RateLimitOptions<TContext>): RefundOptions<(c: TContext) => boolean | Promise<boolean>> {
  if (options.getConnInfo !== undefined) assertFunction('getConnInfo', options.getConnInfo);
  const refunds = resolveRefundOptions(options);
  if (options.keyGenerator !== undefined && options.getConnInfo !== undefined) {
    throw new RateKitOptionError('getConnInfo', 'unset when `keyGenerator` is given (it shapes the default key only; use ipKeyGenerator in yours)', options.getConnInfo);
  }
  if (options.keyGenerator === undefined && options.getConnInfo === undefined) {
    throw new RateKitOptionError(
      'getConnInfo',
      "Hono's getConnInfo for your runtime (from 'hono/bun', 'hono/deno', 'hono/cloudflare-workers' or '@hono/node-server/conninfo'), or a `keyGenerator`",
      undefined,
    );
  }
  return refunds;
}
