// The rate-limiter-flexible row of the HTTP part: its in-memory limiter
// (`RateLimiterMemory`, one fixed window of `limit` points per WINDOW_MS per
// key) as the minimal middleware its wiki shows for Express and Koa (key =
// client IP, `consume`, on rejection 429), plus the headers its README shows
// for the response: the three legacy `X-RateLimit-*` our adapters send by
// default, and `Retry-After` on a refusal (whole seconds, rounded up: the
// README's `msBeforeNext / 1000` has a fraction, which HTTP does not allow).
// What a user of rate-limiter-flexible writes by hand; the framework scripts
// (http-servers/<framework>-rate-limiter-flexible.mjs) only wire it in.

import { RateLimiterMemory as DropInMemory } from '@ratekit/flexible';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { WINDOW_MS } from './http-server.mjs';

/**
 * The limiter, `limit` points per WINDOW_MS per key, and its headers for a `RateLimiterRes`.
 * `dropIn`: the same code on `@ratekit/flexible` (issue 32: only the import changes).
 */
export function flexibleLimiter(limit, { dropIn = false } = {}) {
  const Limiter = dropIn ? DropInMemory : RateLimiterMemory;
  const limiter = new Limiter({ points: limit, duration: WINDOW_MS / 1_000 });
  return { limiter, headers: flexibleHeaders(limit) };
}

/**
 * The README's headers for a `RateLimiterRes` of a limiter of `limit` points, as the name → value
 * object it builds (`refused` adds `Retry-After`). Any store: memory here, Redis in lib/redis-apps.mjs.
 */
export function flexibleHeaders(limit) {
  return (res, refused) => {
    const out = {
      'X-RateLimit-Limit': limit,
      'X-RateLimit-Remaining': res.remainingPoints,
      'X-RateLimit-Reset': Math.ceil((Date.now() + res.msBeforeNext) / 1_000),
    };
    if (refused) out['Retry-After'] = Math.ceil(res.msBeforeNext / 1_000);
    return out;
  };
}

/** The body of a refusal, as in the wiki's middlewares. */
export const TOO_MANY = 'Too Many Requests';
