/**
 * `Ratelimit.slidingWindow(tokens, window)`: the counters of the current and the previous fixed
 * window (`<prefix>:<id>:<window number>`), the previous one weighted by how much of it the
 * sliding window still covers.
 *
 * @module
 */
import { argument, cachedRefusal, numbers, updateCache, withDynamicKey } from './algorithm-support.js';
import { type Duration, ms } from './duration.js';
import { settledFor } from './policy.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm } from './types.js';

/**
 * A sliding window of `tokens` requests per `window`, as `@upstash/ratelimit` 2.2.0's
 * `slidingWindow`: the same keys, values and TTL (two windows and a second); a request is
 * refused when `floor(previous * (1 - elapsed share of the current window)) + current` has
 * reached the limit, and a refused request counts nothing. `reset` is the current window's end.
 *
 * With `clock: 'server'` the window number and the weighting come from the Redis server's
 * `TIME` inside the script (the window keys are then built in Lua), so instances with skewed
 * clocks count alike.
 *
 * @param tokens - requests allowed per window
 * @param window - the window, e.g. `"1 m"`
 * @throws {Error} when `window` is not a {@link Duration} (the incumbent's message)
 * @example
 * ```ts
 * new Ratelimit({ redis, limiter: Ratelimit.slidingWindow(10, '10 s') });
 * ```
 */
export function slidingWindow(tokens: number, window: Duration): Algorithm {
  const windowMs = ms(window);
  const policy = { algorithm: 'slidingWindow', quota: tokens, windowMs, capacity: tokens } as const;
  const settled = settledFor(policy);
  const tokensArg = String(tokens);
  const windowArg = String(windowMs);
  return () => ({
    async limit(ctx, identifier, rate) {
      const take = rate ?? 1;
      const refusal = cachedRefusal(ctx, identifier, tokens, take, settled);
      if (refusal !== undefined) return refusal;
      let remaining: number;
      let limit: number;
      let now: number;
      if (ctx.clock === 'server') {
        const reply = numbers(await ctx.run(SCRIPTS.slidingWindowServerClockLimit, withDynamicKey(ctx, [identifier]), [tokensArg, windowArg, argument(take)]));
        [remaining, limit, now] = reply as [number, number, number];
      } else {
        now = ctx.now();
        const current = Math.floor(now / windowMs);
        const reply = numbers(
          await ctx.run(SCRIPTS.slidingWindowLimit, withDynamicKey(ctx, [`${identifier}:${current}`, `${identifier}:${current - 1}`]), [tokensArg, String(now), windowArg, argument(take)]),
        );
        [remaining, limit] = reply as [number, number];
      }
      const success = remaining >= 0;
      const reset = (Math.floor(now / windowMs) + 1) * windowMs;
      updateCache(ctx, identifier, success, reset, take);
      return { success, limit, remaining: Math.max(0, remaining), reset, pending: settled };
    },
    async getRemaining(ctx, identifier) {
      if (ctx.clock === 'server') {
        const reply = numbers(await ctx.run(SCRIPTS.slidingWindowServerClockRemaining, withDynamicKey(ctx, [identifier]), [tokensArg, windowArg]));
        const [remaining, limit, now] = reply as [number, number, number];
        return { remaining: Math.max(0, remaining), reset: (Math.floor(now / windowMs) + 1) * windowMs, limit };
      }
      const now = ctx.now();
      const current = Math.floor(now / windowMs);
      const reply = numbers(await ctx.run(SCRIPTS.slidingWindowRemaining, withDynamicKey(ctx, [`${identifier}:${current}`, `${identifier}:${current - 1}`]), [tokensArg, String(now), windowArg]));
      return { remaining: Math.max(0, reply[0]!), reset: (current + 1) * windowMs, limit: reply[1]! };
    },
    async resetTokens(ctx, identifier) {
      ctx.cache?.pop(identifier);
      await ctx.run(SCRIPTS.reset, [`${identifier}:*`], []);
    },
  });
}
