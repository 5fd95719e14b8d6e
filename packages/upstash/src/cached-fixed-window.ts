/**
 * `Ratelimit.cachedFixedWindow(tokens, window)`: the fixed window's key, counted in the
 * ephemeral cache first; Redis is updated in the background (`pending`) once the cache knows
 * the window.
 *
 * @module
 */
import { type Duration, ms } from './duration.js';
import { settledFor, withPolicy } from './policy.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm, RegionContext } from './types.js';
import type { EphemeralCache } from './cache.js';

function cacheOf(ctx: RegionContext): EphemeralCache {
  if (ctx.cache === undefined) throw new Error('This algorithm requires a cache');
  return ctx.cache;
}

/**
 * `@upstash/ratelimit` 2.2.0's experimental `cachedFixedWindow`: the first request of a window
 * on an instance asks Redis (INCRBY) and caches the count; later ones count in the cache, and,
 * when admitted, increment Redis in `pending`. `remaining` is `tokens - count` and may be
 * negative, as in the incumbent. Dynamic limits do not apply (the incumbent warns, so do we).
 * One difference: the Redis key expires one window after it is first counted (the incumbent's
 * script never sets the expiry, see `scripts.ts`).
 *
 * @param tokens - requests allowed per window
 * @param window - the window, e.g. `"10 s"`
 * @throws {Error} `This algorithm requires a cache` from `limit`, `getRemaining`, `resetUsedTokens` with `ephemeralCache: false`
 */
export function cachedFixedWindow(tokens: number, window: Duration): Algorithm {
  const windowMs = ms(window);
  const policy = { algorithm: 'cachedFixedWindow', quota: tokens, windowMs, capacity: tokens } as const;
  const settled = settledFor(policy);
  return () => ({
    async limit(ctx, identifier, rate) {
      const cache = cacheOf(ctx);
      if (ctx.dynamicLimits === true) {
        console.warn('Warning: Dynamic limits are not yet supported for cachedFixedWindow algorithm. The dynamicLimits option will be ignored.');
      }
      const take = rate ?? 1;
      const bucket = Math.floor(ctx.now() / windowMs);
      const key = `${identifier}:${bucket}`;
      const reset = (bucket + 1) * windowMs;
      if (cache.get(key) !== null) {
        const count = cache.incr(key, take);
        const success = count <= tokens;
        if (!success) return { success, limit: tokens, remaining: tokens - count, reset, pending: settled };
        const pending = ctx.run(SCRIPTS.cachedFixedWindowLimit, [key], [String(windowMs), String(take)]);
        return withPolicy({ success, limit: tokens, remaining: tokens - count, reset, pending }, policy);
      }
      const count = Number(await ctx.run(SCRIPTS.cachedFixedWindowLimit, [key], [String(windowMs), String(take)]));
      cache.set(key, count);
      const remaining = tokens - count;
      return { success: remaining >= 0, limit: tokens, remaining, reset, pending: settled };
    },
    async getRemaining(ctx, identifier) {
      const cache = cacheOf(ctx);
      const bucket = Math.floor(ctx.now() / windowMs);
      const key = `${identifier}:${bucket}`;
      const reset = (bucket + 1) * windowMs;
      const cached = cache.get(key);
      if (cached !== null) return { remaining: Math.max(0, tokens - cached), reset, limit: tokens };
      const used = Number(await ctx.run(SCRIPTS.cachedFixedWindowRemaining, [key], []));
      return { remaining: Math.max(0, tokens - used), reset, limit: tokens };
    },
    async resetTokens(ctx, identifier) {
      const cache = cacheOf(ctx);
      cache.pop(`${identifier}:${Math.floor(ctx.now() / windowMs)}`);
      await ctx.run(SCRIPTS.reset, [`${identifier}:*`], []);
    },
  });
}
