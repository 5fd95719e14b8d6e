/**
 * `MultiRegionRatelimit`, `@upstash/ratelimit` 2.2.0's limiter over several databases (one per
 * region): each request is recorded in every region under a random request id; the first region
 * to answer decides; in `pending`, the regions that missed ids the others saw get them.
 *
 * @module
 */
import { cachedRefusal, updateCache } from './algorithm-support.js';
import { ephemeralCache } from './cache.js';
import { type Duration, ms } from './duration.js';
import { settledFor, withPolicy } from './policy.js';
import { commonOptions, DEFAULT_PREFIX, RatelimitCore } from './ratelimit-core.js';
import { lazyRunner, type ScriptRunner } from './script-runner.js';
import { SCRIPTS } from './scripts.js';
import type { Algorithm } from './types.js';
import type { EphemeralCache } from './cache.js';

/** The context of a multi-region algorithm: one runner per region. */
export interface MultiRegionContext {
  /** One entry per region, in the order of the `redis` option. */
  regionContexts: Array<{ redis: unknown; run: ScriptRunner; prefix: string }>;
  /** The ephemeral cache (always one, as in the incumbent). */
  cache?: EphemeralCache | undefined;
  /** The caller's clock, Unix epoch ms (ratekit's addition). */
  now: () => number;
}

/** Options of {@link MultiRegionRatelimit}: `@upstash/ratelimit`'s, plus `now`. */
export interface MultiRegionRatelimitConfig {
  /** One client per region: `@upstash/redis`, ioredis or node-redis 4+ clients. The first also holds the dynamic limit. */
  redis: unknown[];
  /** `MultiRegionRatelimit.fixedWindow` or `MultiRegionRatelimit.slidingWindow`. */
  limiter: Algorithm<MultiRegionContext>;
  /** @default '@upstash/ratelimit' */
  prefix?: string;
  /**
   * A Map for refused identifiers. The incumbent keeps a cache of its own in every case (even with
   * `false`, and in place of a given Map); this keeps one in every case too, in the Map when given.
   */
  ephemeralCache?: Map<string, number> | false;
  /** ms before failing open. @default 5000 */
  timeout?: number;
  /** Accepted with the incumbent's warning: the algorithms do not read it. */
  dynamicLimits?: boolean;
  /** Count every request in the first region, as `Ratelimit`'s `analytics` (needs an `@upstash/redis` client there). @default false */
  analytics?: boolean;
  /** Ignored. */
  cacheScripts?: boolean;
  /** Ignored (no telemetry is sent). */
  enableTelemetry?: boolean;
  /** ratekit's addition: the caller's clock, Unix epoch ms. @default Date.now */
  now?: () => number;
  /** ratekit's addition: see `Ratelimit`'s `coalesce` (TCP clients only). @default true */
  coalesce?: boolean;
}

const ID_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A request id: 16 characters of [A-Za-z0-9], as the incumbent draws them. */
function requestId(): string {
  let id = '';
  for (let i = 0; i < 16; i++) id += ID_CHARACTERS.charAt(Math.floor(Math.random() * ID_CHARACTERS.length));
  return id;
}

/** A flat HGETALL reply (`[field, value, ...]`, as every client gives a script's array). */
type Fields = unknown[];

const idsOf = (fields: Fields): string[] => fields.filter((_, i) => i % 2 === 0).map(String);
const sumOf = (fields: Fields): number => fields.reduce<number>((total, value, i) => (i % 2 === 1 ? total + Number.parseInt(String(value)) : total), 0);

/**
 * The pending sync: once every region has answered, each region whose count is under the limit
 * gets, with the tokens of this request, the ids it lacks of those seen in `idsSeen` (the
 * incumbent's rule, its values included).
 */
async function sync(regions: Array<{ run: ScriptRunner; fields: Promise<Fields> }>, key: string, idsSeen: (all: Fields[]) => string[], tokens: number, take: number): Promise<void> {
  const replies = await Promise.all(regions.map((region) => region.fields));
  const all = idsSeen(replies);
  for (const [i, region] of regions.entries()) {
    const fields = replies[i]!;
    if (sumOf(fields) >= tokens) continue;
    const have = new Set(idsOf(fields));
    const missing = all.filter((id) => !have.has(id));
    if (missing.length > 0) await region.run(SCRIPTS.multiSync, [key], [...missing, String(take)]);
  }
}

async function resetEverywhere(ctx: MultiRegionContext, identifier: string): Promise<void> {
  ctx.cache?.pop(identifier);
  // The incumbent starts these without waiting for them; waiting changes no data.
  await Promise.all(ctx.regionContexts.map((region) => region.run(SCRIPTS.reset, [`${identifier}:*`], [])));
}

/**
 * Multi-region fixed window, as `@upstash/ratelimit` 2.2.0's `MultiRegionRatelimit.fixedWindow`:
 * a hash per window (`<prefix>:<id>:<window number>`) of request id -> tokens in each region;
 * the first region's sum after this request decides; `remaining` is `tokens - used` (negative
 * when over, as in the incumbent).
 */
function multiFixedWindow(tokens: number, window: Duration): Algorithm<MultiRegionContext> {
  const windowMs = ms(window);
  const policy = { algorithm: 'fixedWindow', quota: tokens, windowMs, capacity: tokens } as const;
  const settled = settledFor(policy);
  return () => ({
    async limit(ctx, identifier, rate) {
      const id = requestId();
      const bucket = Math.floor(ctx.now() / windowMs);
      const key = `${identifier}:${bucket}`;
      const take = rate ?? 1;
      const refusal = cachedRefusal(ctx, identifier, tokens, take, settled);
      if (refusal !== undefined) return refusal;
      const regions = ctx.regionContexts.map((region) => ({ run: region.run, fields: region.run(SCRIPTS.multiFixedWindowLimit, [key], [id, String(windowMs), String(take)]) as Promise<Fields> }));
      const first = await Promise.any(regions.map((region) => region.fields));
      const remaining = tokens - sumOf(first);
      const success = remaining >= 0;
      const reset = (bucket + 1) * windowMs;
      updateCache(ctx, identifier, success, reset, take);
      const pending = sync(regions, key, (all) => [...new Set(all.flatMap(idsOf))], tokens, take);
      return withPolicy({ success, limit: tokens, remaining, reset, pending }, policy);
    },
    async getRemaining(ctx, identifier) {
      const bucket = Math.floor(ctx.now() / windowMs);
      const key = `${identifier}:${bucket}`;
      const first = (await Promise.any(ctx.regionContexts.map((region) => region.run(SCRIPTS.multiFixedWindowRemaining, [key], [])))) as Fields;
      return { remaining: Math.max(0, tokens - sumOf(first)), reset: (bucket + 1) * windowMs, limit: tokens };
    },
    resetTokens: resetEverywhere,
  });
}

/**
 * Multi-region sliding window, as `@upstash/ratelimit` 2.2.0's `MultiRegionRatelimit.slidingWindow`:
 * hashes of request id -> tokens for the current and the previous window in each region; a region
 * refuses when `previous * (1 - elapsed share) + current + rate` exceeds the limit; the answer
 * counts the previous window rounded up.
 */
function multiSlidingWindow(tokens: number, window: Duration): Algorithm<MultiRegionContext> {
  const windowMs = ms(window);
  const policy = { algorithm: 'slidingWindow', quota: tokens, windowMs, capacity: tokens } as const;
  const settled = settledFor(policy);
  return () => ({
    async limit(ctx, identifier, rate) {
      const id = requestId();
      const now = ctx.now();
      const current = Math.floor(now / windowMs);
      const currentKey = `${identifier}:${current}`;
      const previousKey = `${identifier}:${current - 1}`;
      const take = rate ?? 1;
      const refusal = cachedRefusal(ctx, identifier, tokens, take, settled);
      if (refusal !== undefined) return refusal;
      const regions = ctx.regionContexts.map((region) => {
        const reply = region.run(SCRIPTS.multiSlidingWindowLimit, [currentKey, previousKey], [String(tokens), String(now), String(windowMs), id, String(take)]) as Promise<[Fields, Fields, unknown]>;
        return { run: region.run, reply };
      });
      // The first region to answer decides; its index says which reply the sync sees with this request added.
      const first = await Promise.any(regions.map((region, index) => region.reply.then((reply) => ({ reply, index }))));
      const [currentFields, previousFields, admitted] = first.reply;
      const success = admitted !== null && admitted !== undefined && admitted !== false && Number(admitted) !== 0;
      // The deciding region's current fields, with this request when it admitted it (the incumbent adds it to that reply).
      const seen = success ? [...currentFields, id, String(take)] : currentFields;
      const elapsed = (now % windowMs) / windowMs;
      const used = Math.ceil(sumOf(previousFields) * (1 - elapsed)) + sumOf(seen);
      const remaining = tokens - used;
      const reset = (current + 1) * windowMs;
      updateCache(ctx, identifier, success, reset, take);
      const pending = sync(
        regions.map((region, index) => ({ run: region.run, fields: region.reply.then(([fields]) => (index === first.index ? seen : fields)) })),
        currentKey,
        (all) => [...new Set(all.flatMap(idsOf))],
        tokens,
        take,
      );
      return withPolicy({ success, limit: tokens, remaining: Math.max(0, remaining), reset, pending }, policy);
    },
    async getRemaining(ctx, identifier) {
      const now = ctx.now();
      const current = Math.floor(now / windowMs);
      const used = await Promise.any(
        ctx.regionContexts.map((region) => region.run(SCRIPTS.multiSlidingWindowRemaining, [`${identifier}:${current}`, `${identifier}:${current - 1}`], [String(now), String(windowMs)])),
      );
      return { remaining: Math.max(0, tokens - Number(used)), reset: (current + 1) * windowMs, limit: tokens };
    },
    resetTokens: resetEverywhere,
  });
}

/**
 * A limiter over several Redis databases, the drop-in for `@upstash/ratelimit`'s
 * `MultiRegionRatelimit`: the same keys and data in each region, the same answers (the first
 * region to answer decides) and the same background sync in `pending`.
 *
 * The count is eventual, as the incumbent's: each region decides alone, so requests in flight
 * together may pass more than the limit. The bound, for requests that take tokens (`rate` ≥ 1): in
 * one window, across R regions, at most R × `tokens` tokens pass (R × `tokens` requests of one
 * token). A request passes only if the region that answered first had counted at most `tokens`,
 * itself included, and a region counts every request it records (fixed window: every request, the
 * refused too; sliding window: those it admitted), so each region lets through at most `tokens`.
 * The bound is reached when each region sees its own callers' requests first and answers them
 * first. Once `pending` has settled and nothing is in flight, every region holds what the others
 * saw, and the limit is exact again. The same race can also let fewer than `tokens` pass (a request
 * first in one region's order may be answered by another, where it came late).
 * Measured in `src/multi-region-bound.test.ts`.
 *
 * @throws {RateKitOptionError} at construction for `analytics: true` when the first client is ioredis or node-redis
 * @example
 * ```ts
 * const ratelimit = new MultiRegionRatelimit({
 *   redis: [new Redis({ url: US_URL, token: US_TOKEN }), new Redis({ url: EU_URL, token: EU_TOKEN })],
 *   limiter: MultiRegionRatelimit.slidingWindow(10, '10 s'),
 * });
 * const { success, pending } = await ratelimit.limit(id);
 * context.waitUntil(pending);
 * ```
 */
export class MultiRegionRatelimit extends RatelimitCore<MultiRegionContext> {
  /** A fixed window in every region. */
  static fixedWindow = multiFixedWindow;
  /** A sliding window in every region. */
  static slidingWindow = multiSlidingWindow;

  constructor(config: MultiRegionRatelimitConfig) {
    const { now, coalescing } = commonOptions(config, config.redis[0]);
    const prefix = config.prefix ?? DEFAULT_PREFIX;
    const regionContexts = config.redis.map((redis) => ({ redis, run: lazyRunner(redis, coalescing), prefix }));
    // The incumbent always ends up with an ephemeral cache of its own here (its base class makes one
    // whatever `ephemeralCache` says); this keeps one too, in the given Map when there is one.
    const cache = ephemeralCache(config.ephemeralCache instanceof Map ? config.ephemeralCache : new Map<string, number>(), now);
    const primaryRun = regionContexts[0]?.run ?? lazyRunner(undefined);
    // No deny lists here, as in the incumbent (its MultiRegionRatelimit does not pass `enableProtection` on).
    super({ limiter: config.limiter, ctx: { regionContexts, cache, now }, config: { ...config, enableProtection: false }, primaryRun, primaryRedis: config.redis[0], now });
    if (config.dynamicLimits === true) {
      console.warn('Warning: Dynamic limits are not yet supported for multi-region rate limiters. The dynamicLimits option will be ignored.');
    }
  }
}
