/**
 * BurstyRateLimiter: a steady limiter with a burst allowance behind it, as
 * rlf's `lib/BurstyRateLimiter.js`. A consume the steady limiter refuses is
 * tried on the burst limiter; the answer is always the steady limiter's
 * points (the burst limiter's stay hidden), with the smaller of the two
 * limiters' `msBeforeNext`.
 *
 * The burst limiter is charged only after the steady limiter refused with a
 * RateLimiterRes (rlf): a store failure of the steady limiter rejects with
 * its Error and charges nothing more.
 *
 * @module
 */
import type { RateLimiterCallOptions, RateLimiterLike } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/**
 * A limiter that lets a key exceed `rateLimiter` while `burstLimiter` admits it.
 *
 * `consume` resolves (or rejects, on a refusal by both) with a
 * RateLimiterRes holding the steady limiter's `remainingPoints`,
 * `consumedPoints` and `isFirstInDuration`, and the smaller `msBeforeNext` of
 * the two. It rejects with an Error when a store fails.
 *
 * @example
 * ```ts
 * // 2 requests per second, and 5 more per 10 seconds on top
 * const bursty = new BurstyRateLimiter(
 *   new RateLimiterMemory({ points: 2, duration: 1 }),
 *   new RateLimiterMemory({ keyPrefix: 'burst', points: 5, duration: 10 }),
 * );
 * await bursty.consume(ip);
 * ```
 */
export class BurstyRateLimiter {
  readonly _rateLimiter: RateLimiterLike;
  readonly _burstLimiter: RateLimiterLike;

  constructor(rateLimiter: RateLimiterLike, burstLimiter: RateLimiterLike) {
    this._rateLimiter = rateLimiter;
    this._burstLimiter = burstLimiter;
  }

  /**
   * The steady limiter's answer with the smaller `msBeforeNext` of the two
   * (0 when the burst limiter has no record); null when the steady limiter
   * has none. Does not mutate either answer.
   */
  _combineRes(rlRes: RateLimiterRes | null, blRes: RateLimiterRes | null): RateLimiterRes | null {
    if (!rlRes) return null;
    return new RateLimiterRes(rlRes.remainingPoints, Math.min(rlRes.msBeforeNext, blRes ? blRes.msBeforeNext : 0), rlRes.consumedPoints, rlRes.isFirstInDuration);
  }

  /** Consumes from the steady limiter, and from the burst limiter when the steady one refuses. */
  consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._rateLimiter.consume(key, pointsToConsume, options).catch((rlRejection: unknown) => {
      if (!(rlRejection instanceof RateLimiterRes)) throw rlRejection;
      return this._burstLimiter.consume(key, pointsToConsume, options).then(
        (blRes) => this._combineRes(rlRejection, blRes) as RateLimiterRes,
        (blRejection: unknown) => {
          throw blRejection instanceof RateLimiterRes ? this._combineRes(rlRejection, blRejection) : blRejection;
        },
      );
    });
  }

  /** Both limiters' records for `key`, combined as `consume` combines them; null when the steady limiter has none. */
  get(key: string | number): Promise<RateLimiterRes | null> {
    return Promise.all([this._rateLimiter.get(key), this._burstLimiter.get(key)]).then(([rlRes, blRes]) => this._combineRes(rlRes, blRes));
  }

  /** The steady limiter's points (what a RateLimiterQueue over this limiter compares tokens with). */
  get points(): number {
    return (this._rateLimiter as { points?: number }).points as number;
  }
}
