import type { RateLimitChecker, RateLimitHookHandler, RateLimitOptions } from './types.js';

// Type the route config and the decorators, so `config: { rateLimit: ... }` and
// `fastify.rateLimit()` type-check (pain point of @fastify/rate-limit #305, #309).
declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's limiter options merged over the plugin's, or `false` for none. See @ratekit/fastify. */
    rateLimit?: RateLimitOptions | false;
  }
  interface FastifyInstance {
    /**
     * A hook that rate-limits the routes it is attached to, for a route's
     * `onRequest`/`preHandler` (or `setNotFoundHandler`). Without options, the
     * plugin's own limiter (sharing its count); with options (merged over the
     * plugin's), a new limiter whose count is shared by every route given this
     * hook, or by its `groupId`.
     * @throws {RateKitOptionError} on a bad option
     * @example `app.get('/search', { preHandler: app.rateLimit({ max: 5, timeWindow: '1s' }) }, search)`
     */
    rateLimit(options?: RateLimitOptions): RateLimitHookHandler;
    /**
     * A manual check that sets no headers and throws nothing on a refusal:
     * `await check(request)` counts, `await check(request, { increment: false })`
     * peeks. Without options, the plugin's own limiter.
     * @throws {RateKitOptionError} on a bad option
     * @example
     * ```ts
     * const loginFailures = app.createRateLimit({ max: 5, timeWindow: '15 minutes', groupId: 'login' });
     * const { isExceeded } = await loginFailures(request, { increment: false });
     * ```
     */
    createRateLimit(options?: RateLimitOptions): RateLimitChecker;
  }
}

export {};
