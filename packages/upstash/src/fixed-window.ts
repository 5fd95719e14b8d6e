/**
 * `Ratelimit.fixedWindow(tokens, window)`: a counter per window, `<prefix>:<id>:<window number>`
 * (window number = floor(now / window)), expiring one window after its first increment.
 *
 * @module
 */
import { argument, cachedRefusal, numbers, updateCache, withDynamicKey } from './algorithm-support.js';
import { type Duration, ms } from './duration.js';
import { settledFor } from './policy.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm } from './types.js';

/**
 * A fixed window of `tokens` requests per `window`, as `@upstash/ratelimit` 2.2.0's
 * `fixedWindow`: same key, value and TTL; admitted while the count after the increment is at
 * most the limit; `reset` is the window's end. Always on the caller's clock (the key names the window).
 *
 * @param tokens - requests allowed per window
 * @param window - the window, e.g. `"10 s"`
 * @throws {Error} when `window` is not a {@link Duration} (the incumbent's message)
 * @example
 * ```ts
 * new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(10, '10 s') });
 * ```
 */
export function fixedWindow(tokens: number, window: Duration): Algorithm {
  const windowMs = ms(window);
  const policy = { algorithm: 'fixedWindow', quota: tokens, windowMs, capacity: tokens } as const;
  const settled = settledFor(policy);
  const tokensArg = String(tokens);
  const windowArg = String(windowMs);
  return () => ({
    async limit(ctx, identifier, rate) {
      const take = rate ?? 1;
      const bucket = Math.floor(ctx.now() / windowMs);
      const refusal = cachedRefusal(ctx, identifier, tokens, take, settled);
      if (refusal !== undefined) return refusal;
      const reply = numbers(await ctx.run(SCRIPTS.fixedWindowLimit, withDynamicKey(ctx, [`${identifier}:${bucket}`]), [tokensArg, windowArg, argument(take)]));
      const used = reply[0]!;
      const limit = reply[1]!;
      const success = used <= limit;
      const reset = (bucket + 1) * windowMs;
      updateCache(ctx, identifier, success, reset, take);
      return { success, limit, remaining: Math.max(0, limit - used), reset, pending: settled };
    },
    async getRemaining(ctx, identifier) {
      const bucket = Math.floor(ctx.now() / windowMs);
      const reply = numbers(await ctx.run(SCRIPTS.fixedWindowRemaining, withDynamicKey(ctx, [`${identifier}:${bucket}`]), [tokensArg]));
      return { remaining: Math.max(0, reply[0]!), reset: (bucket + 1) * windowMs, limit: reply[1]! };
    },
    async resetTokens(ctx, identifier) {
      ctx.cache?.pop(identifier);
      await ctx.run(SCRIPTS.reset, [`${identifier}:*`], []);
    },
  });
}
