/**
 * What the four algorithms share: the dynamic limit key, the ephemeral cache's refusals and
 * releases around a decision, and reading a script's reply.
 *
 * @module
 */
import type { EphemeralCache } from './cache.js';
import type { RatelimitResponse, RegionContext } from './types.js';

/** What the cache steps read: a region's or a multi-region limiter's context. */
interface WithCache {
  cache?: EphemeralCache | undefined;
}

/** The suffix of the global dynamic limit key: `<prefix>:dynamic:global`. */
export const DYNAMIC_LIMIT_KEY_SUFFIX = ':dynamic:global';

/** `keys`, with the dynamic limit key appended as the last script key when the limiter has `dynamicLimits`. */
export function withDynamicKey(ctx: RegionContext, keys: string[]): string[] {
  if (ctx.dynamicLimits === true) keys.push(`${ctx.prefix}${DYNAMIC_LIMIT_KEY_SUFFIX}`);
  return keys;
}

/**
 * The `pending` of a response with no work left and no policy (a timeout, a deny-list refusal): one
 * settled promise shared by every such response (it carries no value, and a settled promise keeps no
 * callbacks), instead of one made per decision. An algorithm's responses use their own (policy.ts).
 */
export const NOTHING_PENDING: Promise<void> = Promise.resolve();

/** A whole number as a script argument; `'1'`, the usual `rate`, without formatting it. */
export function argument(value: number): string {
  return value === 1 ? '1' : String(value);
}

/**
 * The refusal the ephemeral cache gives without a Redis call, when `identifier` is blocked and
 * the request takes tokens (a refund always reaches Redis); `settled` is the algorithm's `pending`.
 */
export function cachedRefusal(ctx: WithCache, identifier: string, limit: number, take: number, settled: Promise<void>): RatelimitResponse | undefined {
  if (ctx.cache === undefined || take <= 0) return undefined;
  const { blocked, reset } = ctx.cache.isBlocked(identifier);
  if (!blocked) return undefined;
  return { success: false, limit, remaining: 0, reset, pending: settled, reason: 'cacheBlock' };
}

/** After a Redis decision: a refusal blocks `identifier` until `reset`; an admitted refund lifts a block. */
export function updateCache(ctx: WithCache, identifier: string, success: boolean, reset: number, take: number): void {
  if (ctx.cache === undefined) return;
  if (!success) ctx.cache.blockUntil(identifier, reset);
  else if (take < 0) ctx.cache.pop(identifier);
}

/** A script's array reply as numbers (ioredis and node-redis give integers, `@upstash/redis` JSON numbers). */
export function numbers(reply: unknown): number[] {
  if (!Array.isArray(reply)) throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  return reply.map((value) => Number(value));
}
