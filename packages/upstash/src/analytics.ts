/**
 * `Analytics`, as `@upstash/ratelimit` 2.2.0 exports it (experimental there too): each `limit()`
 * of a limiter with `analytics: true` is counted in hourly buckets, which the Upstash console
 * (https://console.upstash.com/ratelimit) and the methods below read.
 *
 * The counting is `@upstash/core-analytics` 0.0.x, the library the incumbent uses, adopted rather
 * than rewritten: the same keys (`<prefix>:events:<bucket start, epoch ms>`, a sorted set of
 * event JSON -> count), the same bucket (1 hour) and the same reads, so the console and a mixed
 * fleet see one set of figures. That library talks to an `@upstash/redis` client only (it relies
 * on the client's JSON decoding of replies), so analytics needs one: with an ioredis or node-redis
 * client the constructor throws.
 *
 * @module
 */
import { RateKitOptionError } from '@ratekit/core';
import { Analytics as CoreAnalytics, type Aggregate } from '@upstash/core-analytics';
import { isTcpClient } from './script-runner.js';

export type { Aggregate };

/** Where a request came from, as Vercel's `req.geo` and Cloudflare's `request.cf` give it. */
export type Geo = {
  country?: string;
  city?: string;
  region?: string;
  ip?: string;
};

/** An event's outcome: passed (`true`), rate limited (`false`), or refused by a deny list (`'denied'`). */
export type EventSuccess = boolean | 'denied';

/** One counted request: who, when (Unix epoch ms; it picks the bucket), the outcome, and where from. */
export type Event = Geo & {
  identifier: string;
  time: number;
  success: EventSuccess;
};

/** Options of {@link Analytics}. */
export interface AnalyticsConfig {
  /** An `@upstash/redis` client. */
  redis: unknown;
  /** The limiter's prefix. @default '@upstash/ratelimit' */
  prefix?: string;
  /** ratekit's addition: the clock the reads count back from (the newest bucket), Unix epoch ms. @default Date.now */
  now?: () => number;
}

/** The incumbent's settings: hourly buckets, the table `events`, 90 days' retention. */
const TABLE = 'events';
const BUCKET_MS = 3_600_000;
const MAX_BUCKETS = 256;

/**
 * Records and reads a limiter's request counts (through `@upstash/core-analytics`).
 *
 * @throws {RateKitOptionError} naming `redis` when it is an ioredis or node-redis client (analytics needs `@upstash/redis`)
 * @example
 * ```ts
 * const analytics = new Analytics({ redis: Redis.fromEnv() });
 * await analytics.record({ identifier: 'user:1', time: Date.now(), success: true });
 * const usage = await analytics.getUsage(Date.now() - 86_400_000); // { 'user:1': { success: 1, blocked: 0 } }
 * ```
 */
export class Analytics {
  private readonly analytics: CoreAnalytics;
  private readonly now: () => number;

  constructor(config: AnalyticsConfig) {
    if (isTcpClient(config.redis)) {
      throw new RateKitOptionError('redis', 'an @upstash/redis client for analytics (@upstash/core-analytics talks to Redis through it; ioredis and node-redis are not supported there)', config.redis);
    }
    this.now = config.now ?? Date.now;
    this.analytics = new CoreAnalytics({
      // core-analytics types the whole @upstash/redis class; it calls zincrby, eval and pipeline.
      redis: config.redis as ConstructorParameters<typeof CoreAnalytics>[0]['redis'],
      window: '1h',
      prefix: config.prefix ?? '@upstash/ratelimit',
      retention: '90d',
    });
  }

  /** The request's `geo` (Vercel) or else `cf` (Cloudflare), or `{}`. */
  extractGeo(req: { geo?: Geo; cf?: Geo }): Geo {
    return req.geo ?? req.cf ?? {};
  }

  /** Counts `event` in the bucket of its `time`. */
  async record(event: Event): Promise<void> {
    await this.analytics.ingest(TABLE, event);
  }

  /** Per hourly bucket from `cutoff` (epoch ms; at most 256 buckets) to now, the counts grouped by `filter`. */
  async series(filter: keyof Omit<Event, 'time'>, cutoff: number): Promise<Aggregate[]> {
    const now = this.now();
    return this.analytics.aggregateBucketsWithPipeline(TABLE, filter, this.bucketsSince(cutoff, now), now);
  }

  /** Per identifier, the requests passed (`success`) and refused (`blocked`) since `cutoff` (epoch ms; at most 256 hours back). */
  async getUsage(cutoff = 0): Promise<Record<string, { success: number; blocked: number }>> {
    const now = this.now();
    return this.analytics.getAllowedBlocked(TABLE, this.bucketsSince(cutoff, now), now);
  }

  /** The counts grouped by `groupby`, for the last `timestampCount` hourly buckets. */
  async getUsageOverTime(timestampCount: number, groupby: keyof Omit<Event, 'time'>): Promise<Aggregate[]> {
    return this.analytics.aggregateBucketsWithPipeline(TABLE, groupby, timestampCount, this.now());
  }

  /**
   * The identifiers most often allowed, rate limited and denied over the last `timestampCount`
   * hourly buckets: `getTop` of each (default 5), looking at `checkAtMost` entries at most (default `getTop * 5`).
   */
  async getMostAllowedBlocked(
    timestampCount: number,
    getTop?: number,
    checkAtMost?: number,
  ): Promise<{ allowed: Array<{ identifier: string; count: number }>; ratelimited: Array<{ identifier: string; count: number }>; denied: Array<{ identifier: string; count: number }> }> {
    return this.analytics.getMostAllowedBlocked(TABLE, timestampCount, getTop ?? 5, this.now(), checkAtMost);
  }

  /** How many hourly buckets lie from `cutoff`'s to `now`'s, at most 256 (the incumbent's count). */
  private bucketsSince(cutoff: number, now: number): number {
    return Math.min((this.analytics.getBucket(now) - this.analytics.getBucket(cutoff)) / BUCKET_MS, MAX_BUCKETS);
  }
}
