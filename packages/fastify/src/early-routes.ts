import type { FastifyInstance } from 'fastify';

/** The code of the warning raised for routes declared before the plugin loaded. */
export const EARLY_ROUTES_WARNING = 'RATEKIT_FASTIFY_EARLY_ROUTES';

/**
 * Warns, once per registration, when routes already exist as the plugin
 * loads. The plugin limits routes through an `onRoute` hook, which only sees
 * routes declared after it; a route declared earlier (typically because
 * `fastify.register(plugin)` was not awaited before `fastify.get(...)`) is
 * silently left unlimited by @fastify/rate-limit (its issues #292, #362, #389).
 *
 * The warning is a process warning (`process.emitWarning`, printed on stderr
 * by default, whatever Fastify's logger is) with code
 * `RATEKIT_FASTIFY_EARLY_ROUTES`, listing the routes from `printRoutes()`.
 * Routes of other encapsulated scopes are listed too, since Fastify offers
 * no per-scope route list; they are unlimited either way.
 */
export function warnAboutEarlyRoutes(fastify: FastifyInstance): void {
  const tree = fastify.printRoutes({ commonPrefix: false });
  // printRoutes lists each route with its methods in parentheses: `└── /items (GET, HEAD)`.
  if (!/\([A-Z]+(?:, [A-Z]+)*\)/.test(tree)) return;
  process.emitWarning(
    '[ratekit] @ratekit/fastify loaded after these routes were declared, so they are not rate-limited:\n' +
      `${tree.trimEnd()}\n` +
      'Register the plugin with `await fastify.register(...)` before declaring routes.',
    { type: 'RateKitWarning', code: EARLY_ROUTES_WARNING },
  );
}
