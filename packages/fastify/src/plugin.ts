import { bindingLimit, memoryStore, RateKitError, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { type Check, createCheck } from './check.js';
import { registerCompat } from './compat/plugin.js';
import { warnAboutEarlyRoutes } from './early-routes.js';
import { createHook, kLimiter, type LimiterHook } from './hook.js';
import { isRateKitMode } from './mode.js';
import { resolveRegistration, resolveRouteSettings, type Settings } from './options.js';
import type { AllowListedResult, CheckOptions, LimitedResult, RateLimitChecker, RateLimitHookHandler, RateLimitOptions, RateLimitPluginOptions } from './types.js';

/** The stages a limiter can run at, in lifecycle order. */
const STAGES = ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const;

/** One limiter of a registration: its hook and its check share one core limiter. */
interface Limiter {
  readonly settings: Settings;
  readonly check: Check;
  readonly hook: LimiterHook;
}

/** The plugin function; exported wrapped with `fastify-plugin` as {@link fastifyRateLimit}. */
const ratekitFastify: FastifyPluginAsync<RateLimitPluginOptions> = async function ratekitFastify(fastify, options) {
  warnAboutEarlyRoutes(fastify);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- Fastify passes undefined when the plugin is registered without options
  if (!isRateKitMode((options ?? {}) as Record<string, unknown>)) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- Fastify passes undefined when the plugin is registered without options
    registerCompat(fastify, (options ?? {}) as Record<string, unknown>);
    return;
  }
  const log = fastify.log;
  const registration = resolveRegistration(options, (message) => log.warn(message));
  const { base, nameSpace } = registration;

  let store: RateLimitStore;
  if (registration.store !== undefined) store = registration.store;
  else {
    const memory = memoryStore({ maxKeys: registration.cache });
    fastify.addHook('onClose', (_instance, done) => {
      memory.dispose();
      done();
    });
    store = memory;
  }
  const onError = (error: RateKitError) => log.error({ err: error }, error.message);

  /** The static limit ids of each groupId, with the first place that configured it. */
  const groups = new Map<string, { ids: string | undefined; where: string }>();
  let sequence = 0;

  function build(settings: Settings, namespace: string, where: string, optionPath: string): Limiter {
    const groupId = settings.groupId;
    if (groupId !== undefined) {
      const first = groups.get(groupId);
      if (first === undefined) groups.set(groupId, { ids: settings.limitIds, where });
      else if (first.ids !== settings.limitIds) {
        throw new RateKitOptionError(`${optionPath}groupId`, `configured with the same limits as the rest of its group (first configured by ${first.where}), so the group shares one count`, groupId);
      }
      namespace = `${nameSpace}group:${JSON.stringify(groupId)}`;
    }
    const check = createCheck(settings, { store, namespace, now: registration.now, onError, refusalCache: registration.refusalCache });
    const limiter: { settings: Settings; check: Check; hook?: LimiterHook } = { settings, check };
    const hook = createHook(check, settings, limiter);
    return Object.assign(limiter, { hook });
  }

  const globalLimiter = build(registration.settings, `${nameSpace}global`, 'the plugin options', '');

  fastify.addHook('onRoute', (route) => {
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config === false) return;
    let limiter: Limiter;
    if (config === undefined || config === null) {
      if (!registration.global) return;
      limiter = globalLimiter;
    } else {
      const name = routeName(route);
      const path = 'config.rateLimit.';
      const settings = resolveRouteSettings(base, config, path, (message) => log.warn(message));
      limiter = build(settings, `${nameSpace}route:${JSON.stringify(name)}`, name, path);
    }
    if (hasLimiter(route, limiter)) return;
    appendHook(route, limiter.settings.hook, limiter.hook);
  });

  if (!fastify.hasDecorator('rateLimit')) {
    fastify.decorate('rateLimit', function rateLimit(options?: RateLimitOptions): RateLimitHookHandler {
      if (options === undefined) return globalLimiter.hook;
      const path = 'rateLimit(options).';
      const settings = resolveRouteSettings(base, options, path, (message) => log.warn(message));
      return build(settings, `${nameSpace}hook:${++sequence}`, `rateLimit() #${sequence}`, path).hook;
    });
  }

  if (!fastify.hasDecorator('createRateLimit')) {
    fastify.decorate('createRateLimit', function createRateLimit(options?: RateLimitOptions): RateLimitChecker {
      let check = globalLimiter.check;
      if (options !== undefined) {
        const path = 'createRateLimit(options).';
        const settings = resolveRouteSettings(base, options, path, (message) => log.warn(message));
        check = build(settings, `${nameSpace}check:${++sequence}`, `createRateLimit() #${sequence}`, path).check;
      }
      return (request, checkOptions) => manualCheck(check, request, checkOptions);
    });
  }
};

/** A manual check: the outcome in @fastify/rate-limit's `createRateLimit()` shape. */
async function manualCheck(check: Check, request: FastifyRequest, options: CheckOptions | undefined): Promise<AllowListedResult | LimitedResult> {
  const increment = options?.increment ?? true;
  if (typeof increment !== 'boolean') throw new RateKitOptionError('increment', 'a boolean', increment);
  const outcome = await check(request, increment);
  if (outcome.kind === 'unkeyed') throw new RateKitError('ERR_RATEKIT_KEY', '`request.ip` is undefined, so the request has no key to check');
  if (outcome.kind === 'allowListed') return { isAllowed: true, key: outcome.key };
  const { decision } = outcome;
  return {
    isAllowed: false,
    key: outcome.key,
    max: decision.limit,
    timeWindow: bindingLimit(decision)?.windowMs ?? 0,
    remaining: decision.remaining,
    ttl: decision.resetMs,
    ttlInSeconds: Math.ceil(decision.resetMs / 1000),
    isExceeded: outcome.kind === 'refused',
    isBanned: outcome.kind === 'refused' && outcome.banned,
    decision,
  };
}

/** `GET /items`, with HEAD counted as GET (Fastify adds a HEAD route for each GET; they share a count). */
function routeName(route: RouteOptions): string {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => (m === 'HEAD' ? 'GET' : m));
  return `${[...new Set(methods)].join(',')} ${route.url}`;
}

/** True when one of the route's own hooks already runs this limiter (say `onRequest: fastify.rateLimit()`). */
function hasLimiter(route: RouteOptions, limiter: Limiter): boolean {
  const hooks = route as unknown as Record<string, unknown>;
  for (const stage of STAGES) {
    const value = hooks[stage];
    const list = Array.isArray(value) ? value : [value];
    for (const fn of list) if (typeof fn === 'function' && (fn as Partial<LimiterHook>)[kLimiter] === limiter) return true;
  }
  return false;
}

/** Appends the hook after the route's own hooks of that stage (Fastify runs instance hooks before route hooks). */
function appendHook(route: RouteOptions, stage: (typeof STAGES)[number], hook: LimiterHook): void {
  const hooks = route as unknown as Record<string, unknown>;
  const existing = hooks[stage];
  hooks[stage] = existing === undefined || existing === null ? [hook] : Array.isArray(existing) ? [...(existing as unknown[]), hook] : [existing, hook];
}

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
