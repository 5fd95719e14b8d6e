/**
 * The one place this app gets its rate limiter from. `Ratelimit` has the API of @upstash/ratelimit 2.2
 * (`new Ratelimit({ redis, limiter })`, `Ratelimit.slidingWindow(5, '10 s')`, `await ratelimit.limit(id)`);
 * to use @ratekit/upstash, its drop-in, change the import below and nothing else.
 */
export { Ratelimit } from '@upstash/ratelimit';
export { Redis } from '@upstash/redis';
