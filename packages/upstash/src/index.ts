/**
 * @ratekit/upstash: a drop-in for `@upstash/ratelimit` 2.2.0. Change the import and nothing else:
 * the same `Ratelimit` class, algorithms, options, responses and Redis keys, over an
 * `@upstash/redis` client (HTTP) or an ioredis / node-redis client (TCP), on Upstash or on
 * open-source Redis 7.
 *
 * @module
 */
export { ms } from './duration.js';
export type { Duration, Unit } from './duration.js';
