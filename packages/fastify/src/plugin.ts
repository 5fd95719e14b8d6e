import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { registerCompat } from './compat/plugin.js';
import { warnAboutEarlyRoutes } from './early-routes.js';
import { isRateKitMode } from './mode.js';
import { registerRateKit } from './ratekit.js';
import type { RateLimitPluginOptions } from './types.js';

/**
 * The plugin function, exported wrapped with `fastify-plugin` as {@link fastifyRateLimit}. It
 * chooses the engine once, when registered: ratekit mode (`./ratekit.ts`, on @ratekit/core's gate)
 * when the options give a ratekit-only option or a ratekit store (`./mode.ts`), else the
 * @fastify/rate-limit 11 imitation (`./compat/`).
 */
const ratekitFastify: FastifyPluginAsync<RateLimitPluginOptions> = async function ratekitFastify(fastify, options) {
  warnAboutEarlyRoutes(fastify);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- Fastify passes undefined when the plugin is registered without options
  const given = options ?? {};
  if (isRateKitMode(given as Record<string, unknown>)) registerRateKit(fastify, given);
  else registerCompat(fastify, given as Record<string, unknown>);
};

/**
 * Registers rate limiting on a Fastify 4 or 5 instance, as a drop-in for
 * @fastify/rate-limit 11 (wrapped with `fastify-plugin`, so it covers the
 * scope that registers it and that scope's children).
 *
 * What it adds:
 * - an `onRoute` hook that gives every route declared afterwards a limiter at
 *   its `hook` stage: the plugin's (all such routes share one count per key)
 *   unless `global: false`, the route's own for `config: { rateLimit: {...} }`
 *   (one count per route, or per `groupId`), none for `config: { rateLimit: false }`;
 * - `fastify.rateLimit(options?)`: a hook for a route's `onRequest`/`preHandler`
 *   (or `setNotFoundHandler`); without options, the plugin's limiter;
 * - `fastify.createRateLimit(options?)`: a manual check, `{ increment: false }` to peek.
 *
 * A refused request throws an error with `statusCode` 429 (403 once `ban`
 * is exceeded) into Fastify's error handling, so `setErrorHandler` sees it.
 * Headers come from @ratekit/core's header module.
 *
 * Differences from @fastify/rate-limit 11, each deliberate: routes sharing a
 * `groupId` share one count; a second limiter on a route (say
 * `preHandler: fastify.rateLimit({...})` under the global one) runs instead
 * of being skipped; routes declared before the plugin loaded (so left
 * unlimited) raise a `RATEKIT_FASTIFY_EARLY_ROUTES` process warning; an
 * `errorResponseBuilder` result without `statusCode` still answers 429;
 * unknown or unsupported options are errors.
 *
 * @throws {RateKitOptionError} when the plugin's options are bad (registration
 * fails, `ready()` rejects), or, at `fastify.get(...)` time, when a route's
 * `config.rateLimit` is (code `ERR_RATEKIT_INVALID_OPTION`)
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import fastifyRateLimit from '@ratekit/fastify';
 *
 * const app = Fastify();
 * await app.register(fastifyRateLimit, { max: 100, timeWindow: '1 minute' });
 * app.get('/items', listItems);
 * app.post('/items', { config: { rateLimit: { max: 10, timeWindow: '1 minute' } } }, createItem);
 * app.get('/health', { config: { rateLimit: false } }, health);
 * ```
 */
export const fastifyRateLimit = fp(ratekitFastify, { fastify: '4.x || 5.x', name: '@ratekit/fastify' });
