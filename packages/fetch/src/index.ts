/**
 * @ratekit/fetch: rate limiting for the Fetch API without a framework. One
 * function from a `Request` to a refusal `Response` or the RateLimit headers
 * to add, for `Bun.serve`, `Deno.serve`, Cloudflare Workers and Next.js.
 *
 * @module
 */
export { DELAY_HEADER, rateLimit } from './rate-limit.js';
export type { KeyResult, MessageBody, RateLimitCall, RateLimitCallWithAddress, RateLimitFunction, RateLimitPass, RateLimitRefusal, RateLimitResult, WaitUntilContext } from './rate-limit.js';
export type { RateLimitOptions } from './options.js';
export type { AddressLike } from './client-address.js';
export type { TrustProxy } from '@ratekit/core';
export { withHeaders } from './with-headers.js';
