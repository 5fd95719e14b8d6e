/**
 * ratekit mode's options: core's ratekit-mode options (`GateOptions`, documented and checked
 * there when the middleware is built), and what Hono adds: `getConnInfo`, the refund options of
 * hono-rate-limiter (`skipFailedRequests`, `skipSuccessfulRequests`, `requestWasSuccessful`) and
 * `requestPropertyName`. Each bad option throws a `RateKitOptionError` (code
 * `ERR_RATEKIT_INVALID_OPTION`) naming it.
 *
 * @module
 */
import { assertFunction, type GateOptions, RateKitOptionError } from '@ratekit/core';
import type { Context } from 'hono';

/** The part of Hono's `ConnInfo` the default key needs (`hono/conninfo`'s type). */
export interface ConnInfoLike {
  remote: { address?: string | undefined };
}

/** Hono's `getConnInfo` for a runtime: `import { getConnInfo } from 'hono/bun'`, etc. */
export type GetConnInfo = (c: Context) => ConnInfoLike;

/** Options of `rateLimit`: every `GateOptions` of @ratekit/core over Hono's `Context`, and Hono's own. */
export interface RateLimitOptions<TContext extends Context = Context> extends GateOptions<TContext, Response> {
  /**
   * Hono's `getConnInfo` for the runtime the app runs on: from `hono/bun`, `hono/deno`,
   * `hono/cloudflare-workers` or `@hono/node-server/conninfo`. The default key reads the client
   * address from it (on Workers, `cf-connecting-ip`, which Cloudflare's edge sets). Required when
   * `keyGenerator` is not given: there is no fall-back to a header a client can write.
   */
  getConnInfo?: GetConnInfo;
  /** Give the cost back when the response failed (`requestWasSuccessful` false, or the handler threw). @default false (as hono-rate-limiter) */
  skipFailedRequests?: boolean;
  /** Give the cost back when the response succeeded. @default false (as hono-rate-limiter) */
  skipSuccessfulRequests?: boolean;
  /** Whether a response counts as a success. @default (c) => c.res.status < 400 (as hono-rate-limiter) */
  requestWasSuccessful?: (c: TContext) => boolean | Promise<boolean>;
  /** The context variable the decision is put in (`c.get('rateLimit')`). @default 'rateLimit' */
  requestPropertyName?: string;
}

/** The names Hono adds to the gate's. */
export const HONO_OPTIONS = ['getConnInfo', 'skipFailedRequests', 'skipSuccessfulRequests', 'requestWasSuccessful', 'requestPropertyName'] as const;

/** Names users of hono-rate-limiter may pass, and ours. */
export const RENAMED: Readonly<Record<string, string>> = {
  requestStorePropertyName: 'requestPropertyName (the limiter is on the middleware: `.limiter`)',
  binding: 'store',
};

/**
 * Checks Hono's own options.
 * @returns the context variable's name
 * @throws {RateKitOptionError} naming the option
 */
export function resolveHonoOptions<TContext extends Context>(options: RateLimitOptions<TContext>): string {
  for (const name of ['getConnInfo', 'requestWasSuccessful'] as const) {
    if (options[name] !== undefined) assertFunction(name, options[name]);
  }
  for (const name of ['skipFailedRequests', 'skipSuccessfulRequests'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new RateKitOptionError(name, 'a boolean', options[name]);
  }
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
  const name = options.requestPropertyName ?? 'rateLimit';
  if (typeof name !== 'string' || name === '') throw new RateKitOptionError('requestPropertyName', 'a non-empty string', name);
  return name;
}
