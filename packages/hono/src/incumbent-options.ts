/**
 * hono-rate-limiter's vocabulary in ratekit mode: the options it has and the gate does not
 * (`skipFailedRequests`, `skipSuccessfulRequests`, `requestWasSuccessful`, and the context
 * variable's name), and the names its users may pass. They are express-rate-limit's, checked by
 * core's `resolveRefundOptions`.
 *
 * @module
 */

/** The options of ratekit mode that come from hono-rate-limiter. `TContext` is Hono's `Context`. */
export interface HonoRateLimiterOptions<TContext> {
  /** Give the cost back when the response failed (`requestWasSuccessful` false, or the handler threw). @default false (as hono-rate-limiter) */
  skipFailedRequests?: boolean;
  /** Give the cost back when the response succeeded. @default false (as hono-rate-limiter) */
  skipSuccessfulRequests?: boolean;
  /** Whether a response counts as a success. @default (c) => c.res.status < 400 (as hono-rate-limiter) */
  requestWasSuccessful?: (c: TContext) => boolean | Promise<boolean>;
  /** The context variable the decision is put in (`c.get('rateLimit')`). @default 'rateLimit' */
  requestPropertyName?: string;
}

/** The names of {@link HonoRateLimiterOptions}. */
export const HONO_RATE_LIMITER_OPTIONS = ['skipFailedRequests', 'skipSuccessfulRequests', 'requestWasSuccessful', 'requestPropertyName'] as const;

/** Names users of hono-rate-limiter may pass, and ours. */
export const RENAMED: Readonly<Record<string, string>> = {
  requestStorePropertyName: 'requestPropertyName (the limiter is on the middleware: `.limiter`)',
  binding: 'store',
};
