/**
 * The shapes `@upstash/ratelimit` 2.2.0 exposes, for code that names them: the response of
 * `limit()`, an algorithm, the context an algorithm runs in.
 *
 * @module
 */
import type { EphemeralCache } from './cache.js';
import type { ScriptRunner } from './script-runner.js';

/** Why a response is not the algorithm's plain decision: `timeout` (failed open), `cacheBlock` (the ephemeral cache refused), `denyList` (a deny-listed value; see `enableProtection`). */
export type RatelimitResponseType = 'timeout' | 'cacheBlock' | 'denyList';

/** The answer of `limit()`, as `@upstash/ratelimit` gives it. All instants are Unix epoch milliseconds. */
export interface RatelimitResponse {
  /** Whether the request may pass. */
  success: boolean;
  /** The limit in force (the dynamic limit when one is set): tokens per window, or the bucket's maximum. */
  limit: number;
  /** Requests left (never negative, except `cachedFixedWindow`, which reports `limit - used` as the incumbent does). */
  remaining: number;
  /** When the window ends (window algorithms) or the bucket's next refill (token bucket), epoch ms; 0 on a timeout. */
  reset: number;
  /** Work still running after the answer (`cachedFixedWindow`'s Redis update, the multi-region sync, the IP deny list refresh, analytics); await it, or pass it to `waitUntil`. */
  pending: Promise<unknown>;
  /** Set when the answer did not come from Redis: see {@link RatelimitResponseType}. */
  reason?: RatelimitResponseType;
  /** The deny-listed value (the identifier, or the `ip`, `userAgent` or `country` given), with `reason: 'denyList'`. */
  deniedValue?: string | undefined;
}

/** What an algorithm runs in: the limiter's client, cache, prefix and clock. */
export interface RegionContext {
  /** The `redis` option as given. */
  redis: unknown;
  /** The ephemeral cache, unless `ephemeralCache: false`. */
  cache?: EphemeralCache | undefined;
  /** Whether the limit is read from `<prefix>:dynamic:global` first. */
  dynamicLimits?: boolean | undefined;
  /** The key prefix. */
  prefix: string;
  /** Sends a script (ratekit's addition). */
  run: ScriptRunner;
  /** The caller's clock, Unix epoch ms (ratekit's addition). */
  now: () => number;
  /** Whose clock sliding windows and token buckets use (ratekit's addition). */
  clock: 'caller' | 'server';
}

/** The usage figures `getRemaining()` returns. */
export interface RemainingTokens {
  remaining: number;
  reset: number;
  limit: number;
}

/**
 * An algorithm, as `Ratelimit.fixedWindow(...)` and the others return it: a function giving the
 * three operations on a context. `identifier` is the key with its prefix (`<prefix>:<id>`).
 */
export type Algorithm<TContext = RegionContext> = () => {
  limit: (ctx: TContext, identifier: string, rate?: number) => Promise<RatelimitResponse>;
  getRemaining: (ctx: TContext, identifier: string) => Promise<RemainingTokens>;
  resetTokens: (ctx: TContext, identifier: string) => Promise<void>;
};

/** What `limit()` takes besides the identifier. */
export interface LimitOptions {
  /** Tokens this request takes (negative: a refund). @default 1 */
  rate?: number;
  /** Checked against the deny lists, with `enableProtection`. */
  ip?: string;
  /** Checked against the deny lists, with `enableProtection`. */
  userAgent?: string;
  /** Checked against the deny lists, with `enableProtection`. */
  country?: string;
  /** Where the request came from, recorded with `analytics`. */
  geo?: { country?: string; city?: string; region?: string; ip?: string };
}
