import type { ContextConfigDefault, FastifyRequest, FastifySchema, preHandlerAsyncHookHandler, RouteGenericInterface } from 'fastify';
import type { CheckResult, CheckOptions, CreateRateLimitOptions, RateLimitOptions } from './types.js';

// Type the route config and the decorators, so `config: { rateLimit: ... }` and
// `fastify.rateLimit()` type-check (pain point of @fastify/rate-limit #305, #309).
// The decorators keep the instance's type parameters (an http2 server, a custom
// logger, a type provider), as @fastify/rate-limit 11's declarations do.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's limiter options merged over the plugin's, or `false` for none. See @ratekit/fastify. */
    rateLimit?: RateLimitOptions | false;
  }
  interface FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider> {
    /**
     * A hook that rate-limits the routes it is attached to, for a route's
     * `onRequest`/`preHandler` (or `setNotFoundHandler`). Without options, the
     * plugin's own limiter (sharing its count); with options (merged over the
     * plugin's), a new limiter whose count is shared by every route given this
     * hook, or by its `groupId`.
     *
     * Typed as @fastify/rate-limit 11 types it, an async hook: called as
     * `hook.call(fastify, request, reply)` it returns a promise that rejects
     * with the refusal. (Fastify itself calls it with a `done` callback, so an
     * in-memory decision needs no promise.)
     * @throws {RateKitOptionError} on a bad option
     * @example `app.get('/search', { preHandler: app.rateLimit({ max: 5, timeWindow: '1s' }) }, search)`
     */
    rateLimit<RouteGeneric extends RouteGenericInterface = RouteGenericInterface, ContextConfig = ContextConfigDefault, SchemaCompiler extends FastifySchema = FastifySchema>(
      options?: RateLimitOptions,
    ): preHandlerAsyncHookHandler<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>;
    /**
     * A manual check that sets no headers and throws nothing on a refusal:
     * `await check(request)` counts, `await check(request, { increment: false })`
     * peeks. Without options, the plugin's own limiter. The result has
     * @fastify/rate-limit 11's fields; a registration in ratekit mode adds
     * core's whole `decision` (see {@link LimitedResult}).
     * @throws {RateKitOptionError} on a bad option
     * @example
     * ```ts
     * const loginFailures = app.createRateLimit({ max: 5, timeWindow: '15 minutes', groupId: 'login' });
     * const { isExceeded } = await loginFailures(request, { increment: false });
     * ```
     */
    createRateLimit(options?: CreateRateLimitOptions): (request: FastifyRequest, options?: CheckOptions) => Promise<CheckResult>;
  }
}

export {};
