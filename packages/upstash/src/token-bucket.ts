/**
 * `Ratelimit.tokenBucket(refillRate, interval, maxTokens)`: a hash `<prefix>:<id>` of
 * `refilledAt` (epoch ms) and `tokens`.
 *
 * @module
 */
import { argument, cachedRefusal, numbers, updateCache, withDynamicKey } from './algorithm-support.js';
import { type Duration, ms } from './duration.js';
import { settledFor } from './policy.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm } from './types.js';

/** `refilledAt` of a bucket that does not exist, in the read-only script's reply. */
const NOT_FOUND = -1;

/**
 * A token bucket of `maxTokens`, refilled by `refillRate` tokens at the end of each whole
 * `interval`, as `@upstash/ratelimit` 2.2.0's `tokenBucket`: the same hash, fields and TTL (the
 * time until full); a request taking more tokens than are left is refused and takes none.
 * `reset` is the next refill.
 *
 * With `clock: 'server'` the time comes from the Redis server's `TIME` inside the script.
 *
 * @param refillRate - tokens added per interval
 * @param interval - the refill interval, e.g. `"10 s"`
 * @param maxTokens - the bucket's size, and its content when new
 * @throws {Error} when `interval` is not a {@link Duration} (the incumbent's message)
 * @example
 * ```ts
 * new Ratelimit({ redis, limiter: Ratelimit.tokenBucket(5, '10 s', 10) });
 * ```
 */
export function tokenBucket(refillRate: number, interval: Duration, maxTokens: number): Algorithm {
  const intervalMs = ms(interval);
  const policy = { algorithm: 'tokenBucket', quota: refillRate, windowMs: intervalMs, capacity: maxTokens } as const;
  const settled = settledFor(policy);
  const maxTokensArg = String(maxTokens);
  const intervalArg = String(intervalMs);
  const refillRateArg = String(refillRate);
  return () => ({
    async limit(ctx, identifier, rate) {
      const take = rate ?? 1;
      const refusal = cachedRefusal(ctx, identifier, maxTokens, take, settled);
      if (refusal !== undefined) return refusal;
      const now = ctx.clock === 'server' ? '' : String(ctx.now());
      const reply = numbers(await ctx.run(SCRIPTS.tokenBucketLimit, withDynamicKey(ctx, [identifier]), [maxTokensArg, intervalArg, refillRateArg, now, argument(take)]));
      const [remaining, reset, limit] = reply as [number, number, number];
      const success = remaining >= 0;
      updateCache(ctx, identifier, success, reset, take);
      return { success, limit, remaining: Math.max(0, remaining), reset, pending: settled };
    },
    async getRemaining(ctx, identifier) {
      const reply = numbers(await ctx.run(SCRIPTS.tokenBucketRemaining, withDynamicKey(ctx, [identifier]), [maxTokensArg]));
      const [remaining, refilledAt, limit] = reply as [number, number, number];
      return { remaining: Math.max(0, remaining), reset: refilledAt === NOT_FOUND ? ctx.now() + intervalMs : refilledAt + intervalMs, limit };
    },
    async resetTokens(ctx, identifier) {
      ctx.cache?.pop(identifier);
      // The bucket's own key, as a SCAN pattern, as the incumbent does.
      await ctx.run(SCRIPTS.reset, [identifier], []);
    },
  });
}
