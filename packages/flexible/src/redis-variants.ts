/**
 * rate-limiter-flexible's two other stores on Redis's protocol, served by {@link RateLimiterRedis}: they read and
 * write the same data (`<keyPrefix>:<key>`, an integer string with a TTL), so a fleet can mix them with rlf's.
 *
 * - `RateLimiterValkey` (rlf's store for an `iovalkey` client, whose API is ioredis's): the same store, with
 *   rlf's `rejectIfValkeyNotReady` for `rejectIfRedisNotReady`.
 * - `RateLimiterRedisNonAtomic` (rlf's store that sends its commands as a MULTI instead of one script): here it
 *   runs RateLimiterRedis's one atomic script. The answers are the same whenever no other call on the key
 *   interleaves; where rlf's separate commands could interleave, this one cannot, so it can only count more exactly.
 *
 * @module
 */
import type { IRateLimiterValkeyOptions } from './options.js';
import { RateLimiterRedis, type RateLimiterRedisOptions } from './redis.js';

/** Options of {@link RateLimiterValkey}: rlf's Valkey options, and @ratekit/flexible's additions to RateLimiterRedis. */
export type RateLimiterValkeyOptions = IRateLimiterValkeyOptions & Omit<RateLimiterRedisOptions, 'rejectIfRedisNotReady' | 'useRedisPackage' | 'useRedis3AndLowerPackage'>;

/**
 * rlf's `RateLimiterValkey`, on an `iovalkey` client (or any ioredis-API client), on {@link RateLimiterRedis}.
 *
 * @throws {Error} rlf's option errors, as RateLimiterRedis throws them
 * @example
 * ```ts
 * import Valkey from 'iovalkey';
 * const limiter = new RateLimiterValkey({ storeClient: new Valkey(), keyPrefix: 'login', points: 5, duration: 60 });
 * ```
 */
export class RateLimiterValkey extends RateLimiterRedis {
  constructor(opts: RateLimiterValkeyOptions) {
    const { rejectIfValkeyNotReady, ...rest } = opts;
    super({ ...rest, rejectIfRedisNotReady: rejectIfValkeyNotReady });
  }
}

/**
 * rlf's `RateLimiterRedisNonAtomic`, with RateLimiterRedis's options and data, run atomically (see the module).
 *
 * @throws {Error} rlf's option errors, as RateLimiterRedis throws them
 */
export class RateLimiterRedisNonAtomic extends RateLimiterRedis {}
