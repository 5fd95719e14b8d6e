/**
 * The one place this app gets its rate limiter from: @ratekit/upstash, a drop-in for @upstash/ratelimit 2.2
 * (`new Ratelimit({ redis, limiter })`, `Ratelimit.slidingWindow(5, '10 s')`, `await ratelimit.limit(id)`).
 * For @upstash/ratelimit itself, import `Ratelimit` from '@upstash/ratelimit' here and nothing else changes.
 */
export { Ratelimit } from '@ratekit/upstash';
export { Redis } from '@upstash/redis';
