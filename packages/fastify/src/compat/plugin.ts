import { RateKitError, RateKitOptionError } from '@ratekit/core';
import { rateKitOptionsIn } from '../mode.js';
import type { AllowListedResult, LimitedResult } from './types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { LocalStore } from './local-store.js';
import { normalizeIP } from './normalize-ip.js';
import { type CompatParams, mergeRouteParams, resolvePluginParams, type Warn } from './options.js';
import { DEFAULT_NAMESPACE, type IoRedisLike, RedisStore } from './redis-store.js';
import { defaultErrorResponse, errorContext, type Exceeded, writePassHeaders, writeRefusalHeaders } from './responses.js';
import { type FastifyRateLimitStore, isStoreClass, type StoreResult } from './store-contract.js';

/** `createRateLimit()`'s answer for an allow-listed key; the key as `keyGenerator` returned it. */
export type CompatAllowed = Omit<AllowListedResult, 'key'> & { key: unknown };

/** `createRateLimit()`'s answer for a counted key, exactly @fastify/rate-limit 11's fields (no `decision`). */
export type CompatCounted = Omit<LimitedResult, 'key' | 'decision'> & { key: unknown };

/** One limiter: its options and its store (the plugin's, or a `child()` of it). */
interface Limiter {
  readonly params: CompatParams;
  readonly store: FastifyRateLimitStore;
  /** The request decoration marking that this registration's limiter already ran (upstream runs one per request). */
  readonly ran: symbol;
}

/**
 * Registers @fastify/rate-limit 11's behaviour for a registration given only
 * its options: its steps in its order, its store contract (the in-memory
 * store, the `redis` option's store, or a `store` class), its headers and
 * its refusal. @ratekit/fastify runs this when no ratekit option is given.
 *
 * @param settings - the plugin's options, as upstream takes them
 */
export function registerCompat(fastify: FastifyInstance, settings: Readonly<Record<string, unknown>>): void {
  const warn: Warn = (message) => fastify.log.warn(message);
  const params = resolvePluginParams(settings, warn);
  const ran = Symbol('@ratekit/fastify.rateLimitRan');
  const plugin: Limiter = { params, store: createStore(settings, params), ran };
  fastify.decorateRequest(ran, false);

  const limiterFor = (options: unknown, routeInfo: object, where: string): Limiter => {
    if (typeof options !== 'object' || options === null) return plugin;
    const ratekitOnly = rateKitOptionsIn(options as Record<string, unknown>)[0];
    if (ratekitOnly !== undefined) {
      const value = (options as Record<string, unknown>)[ratekitOnly];
      throw new RateKitOptionError(
        `${where}${ratekitOnly}`,
        'unset, unless the plugin is registered in ratekit mode (with `algorithm`, `limits`, `cost`, `standardHeaders` or a ratekit `store`)',
        value,
      );
    }
    const merged = mergeRouteParams(params, options as Record<string, unknown>, routeInfo, where, warn);
    return { params: merged, store: plugin.store.child(merged), ran };
  };

  if (!fastify.hasDecorator('createRateLimit')) {
    fastify.decorate('createRateLimit', ((options?: unknown) => {
      const limiter = limiterFor(options, {}, 'createRateLimit(options).');
      return (request: FastifyRequest, callOptions?: { increment?: boolean }) => check(limiter, request, callOptions?.increment !== false);
    }) as unknown as FastifyInstance['createRateLimit']);
  }
  if (!fastify.hasDecorator('rateLimit')) {
    fastify.decorate('rateLimit', ((options?: unknown) => hookOf(limiterFor(options, {}, 'rateLimit(options).'))) as unknown as FastifyInstance['rateLimit']);
  }

  fastify.addHook('onRoute', (route) => {
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config !== undefined && config !== null) {
      if (typeof config === 'object') addHook(route, limiterFor(config, route, 'config.rateLimit.'));
      else if (config !== false) throw new Error('Unknown value for route rate-limit configuration');
    } else if (params.global) {
      addHook(route, plugin);
    }
  });
}

function createStore(settings: Readonly<Record<string, unknown>>, params: CompatParams): FastifyRateLimitStore {
  if (settings.store) {
    const Store = settings.store;
    if (!isStoreClass(Store)) throw new TypeError('`store` must be a class implementing incr(key, callback, timeWindow, max) and child(routeOptions)');
    return new Store(params);
  }
  if (settings.redis) return new RedisStore(params, settings.redis as IoRedisLike, typeof settings.nameSpace === 'string' ? settings.nameSpace : DEFAULT_NAMESPACE);
  return new LocalStore({ ...params, cache: typeof settings.cache === 'number' ? settings.cache : undefined });
}

/** Appends the limiter's hook after the route's own hooks of its stage. */
function addHook(route: RouteOptions, limiter: Limiter): void {
  const hooks = route as unknown as Record<string, unknown>;
  const stage = limiter.params.hook;
  const existing = hooks[stage];
  const hook = routeHookOf(limiter, route);
  if (Array.isArray(existing)) existing.push(hook);
  else hooks[stage] = typeof existing === 'function' ? [existing, hook] : [hook];
}

/** What a route hook's steps return when the request goes on (no refusal). */
const GO_ON = Symbol('go on');

/**
 * The hook of one route. For the common case (the in-memory store, the
 * client IP as key, a constant `max` and `timeWindow`, no allow-list
 * function; every stage but `preParsing`) a callback-style hook that does
 * {@link hookOf}'s steps synchronously, with no promise, timer or result
 * object per request; anything else gets {@link hookOf}'s hook.
 *
 * The route's `groupId` is read from `route.config`, the object Fastify
 * builds the route's `request.routeOptions.config` from (that getter
 * builds a new object on every read).
 */
function routeHookOf(limiter: Limiter, route: RouteOptions) {
  const { params, store, ran } = limiter;
  const { max, timeWindow, allowList, labels, ipv6Subnet, ban } = params;
  if (
    store.constructor !== LocalStore ||
    params.keyGenerator !== undefined ||
    typeof allowList === 'function' ||
    typeof max !== 'number' ||
    typeof timeWindow !== 'number' ||
    params.hook === 'preParsing'
  ) {
    return hookOf(limiter);
  }
  const local = store as LocalStore;
  const limit = max;
  const windowMs = timeWindow;
  // A falsy allowList is none, as upstream's `if (params.allowList)`.
  const list = allowList || null;
  const passLimit = Boolean(params.addHeadersOnExceeding[labels.rateLimit]);
  const passRemaining = Boolean(params.addHeadersOnExceeding[labels.rateRemaining]);
  const passReset = Boolean(params.addHeadersOnExceeding[labels.rateReset]);
  const config = route as { config?: { rateLimit?: { groupId?: unknown } } };

  /** The refusal to answer with (upstream throws it from its async hook), or {@link GO_ON}. */
  function run(request: FastifyRequest, reply: FastifyReply): unknown {
    let key = clientKey(request, ipv6Subnet);
    const groupId = config.config?.rateLimit?.groupId;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as the incumbent: it concatenates whatever value it is given
    if (groupId) key += String(groupId);
    if (list?.includes(key)) return GO_ON;
    const current = local.hit(key, windowMs, limit);
    const ttl = local.lastTtl;
    const remaining = Math.max(0, limit - current);
    const ttlInSeconds = Math.ceil(ttl / 1000);
    if (!(current > limit)) {
      if (passLimit) reply.header(labels.rateLimit, max);
      if (passRemaining) reply.header(labels.rateRemaining, remaining);
      if (passReset) reply.header(labels.rateReset, ttlInSeconds);
      params.onExceeding(request, key);
      return GO_ON;
    }
    return refusalOf(params, request, reply, key, { max: limit, remaining, ttl, ttlInSeconds }, ban !== -1 && current - limit > ban);
  }

  return function rateLimit(request: FastifyRequest, reply: FastifyReply, done: (error?: unknown) => void): Promise<void> | undefined {
    const marks = request as unknown as Record<symbol, boolean>;
    if (marks[ran]) {
      done();
      return undefined;
    }
    marks[ran] = true;
    let refusal: unknown;
    try {
      refusal = run(request, reply);
    } catch (error) {
      // What Fastify does with a rejection of an async hook, falsy ones included (FST_ERR_SEND_UNDEFINED_ERR).
      return Promise.reject(error);
    }
    if (refusal === GO_ON) done();
    else if (refusal) done(refusal);
    // A falsy refusal (an `errorResponseBuilder` returning nothing): rejected, so Fastify answers it as upstream's throw.
    else return Promise.reject(refusal);
    return undefined;
  };
}

/** The route hook: headers on a pass, `errorResponseBuilder`'s result (or the default error) thrown on a refusal. */
function hookOf(limiter: Limiter) {
  const { params, ran } = limiter;
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const marks = request as unknown as Record<symbol, boolean>;
    if (marks[ran]) return;
    marks[ran] = true;
    const outcome = await check(limiter, request, true);
    if (outcome.isAllowed) return;
    const key = outcome.key as string;
    if (!outcome.isExceeded) {
      writePassHeaders(reply, params, outcome);
      params.onExceeding(request, key);
      return;
    }
    throw refusalOf(params, request, reply, key, outcome, outcome.isBanned);
  };
}

/**
 * Upstream's steps on a refusal, in its order: `onExceeded`, the refusal
 * headers, `onBanReach` when banned; returns what its hook throws:
 * `errorResponseBuilder`'s result, or the default 429 (403 when banned) error.
 */
function refusalOf(params: CompatParams, request: FastifyRequest, reply: FastifyReply, key: string, state: Exceeded, banned: boolean): unknown {
  params.onExceeded(request, key);
  writeRefusalHeaders(reply, params, state);
  const context = errorContext(state, banned);
  if (banned) params.onBanReach(request, key);
  return params.errorResponseBuilder === undefined ? defaultErrorResponse(context) : params.errorResponseBuilder(request, context);
}

/**
 * One check, upstream's steps in order: the key (`keyGenerator`, or the
 * client IP grouped by `ipv6Subnet`), plus the route's `groupId`; the allow
 * list; `max` and `timeWindow` (functions are called now); the store's
 * `incr` (or `read` for `increment: false`). A store error, or no answer
 * within `storeTimeoutMs` (ratekit's addition: a request never hangs on a
 * dead store), is thrown, or with `skipOnError` counts as no hits.
 *
 * @throws {Error} the store's error (without `skipOnError`); a `read`-less store asked to peek
 * @throws {RateKitError} `ERR_RATEKIT_KEY` when the default key finds no `request.ip`
 */
async function check(limiter: Limiter, request: FastifyRequest, increment: boolean): Promise<CompatAllowed | CompatCounted> {
  const { params, store } = limiter;
  let key: unknown = params.keyGenerator === undefined ? clientKey(request, params.ipv6Subnet) : await params.keyGenerator(request);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- routeOptions is missing on Fastify 4 before 4.10, which the compat mode still serves
  const groupId = (request.routeOptions?.config as { rateLimit?: { groupId?: unknown } } | undefined)?.rateLimit?.groupId;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as the incumbent: it concatenates whatever value it is given
  if (groupId) key = (key as string) + String(groupId);

  const { allowList } = params;
  // A falsy allowList is none, as upstream's `if (params.allowList)`.
  if (typeof allowList === 'function' ? await allowList(request, key as string) : allowList ? allowList.includes(key) : false) return { isAllowed: true, key };

  const max = typeof params.max === 'number' ? params.max : await params.max(request, key as string);
  const timeWindow = typeof params.timeWindow === 'number' ? params.timeWindow : await params.timeWindow(request, key as string);
  let result: StoreResult = { current: 0, ttl: 0 };
  if (!increment && typeof store.read !== 'function') {
    throw new Error('The configured rate-limit store does not implement a `read` method, which is required to use `{ increment: false }`');
  }
  try {
    const answer = callStore(store, key as string, increment, timeWindow, max, params.storeTimeoutMs);
    result = answer instanceof Promise ? await answer : answer;
  } catch (error) {
    if (!params.skipOnError) throw error;
  }
  const state: Exceeded = { max, remaining: Math.max(0, max - result.current), ttl: result.ttl, ttlInSeconds: Math.ceil(result.ttl / 1000) };
  return {
    isAllowed: false,
    key,
    max,
    timeWindow,
    remaining: state.remaining,
    ttl: state.ttl,
    ttlInSeconds: state.ttlInSeconds,
    isExceeded: result.current > max,
    isBanned: params.ban !== -1 && result.current - max > params.ban,
  };
}

/**
 * One `incr` (or `read`) of the store: its answer as soon as it calls back,
 * directly when it calls back before returning (the in-memory store), else
 * a promise that rejects after `timeoutMs` without an answer. Only the
 * first call back counts.
 */
function callStore(store: FastifyRateLimitStore, key: string, increment: boolean, timeWindow: number, max: number, timeoutMs: number): StoreResult | Promise<StoreResult> {
  let sync = true;
  // Set by the store's callback: typed wide so flow analysis does not pin them to their first value.
  let called = false as boolean;
  let failure = null as Error | null;
  let answer: StoreResult | undefined;
  let settle: ((error: Error | null, answer?: StoreResult) => void) | undefined;
  const callback = (error: Error | null, result?: StoreResult): void => {
    if (called) return;
    called = true;
    if (sync) {
      failure = error;
      answer = result;
    } else {
      settle?.(error, result);
    }
  };
  try {
    if (increment) store.incr(key, callback, timeWindow, max);
    else store.read!(key, callback, timeWindow, max);
  } catch (error) {
    // As in a promise executor: a throw after the answer is ignored.
    if (!called) throw error;
  } finally {
    sync = false;
  }
  if (called) {
    if (failure) throw failure;
    return answer!;
  }
  return new Promise<StoreResult>((resolve, reject) => {
    const timer =
      timeoutMs === Number.POSITIVE_INFINITY ? undefined : setTimeout(() => reject(new RateKitError('ERR_RATEKIT_STORE', `The rate-limit store did not answer within ${timeoutMs} ms`)), timeoutMs);
    settle = (error, result) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(result!);
    };
  });
}

/** The default key: `request.ip` (which honours Fastify's `trustProxy`) through {@link normalizeIP}. */
function clientKey(request: FastifyRequest, ipv6Subnet: number): string {
  const ip: unknown = request.ip;
  if (typeof ip !== 'string') throw new RateKitError('ERR_RATEKIT_KEY', '`request.ip` is not a string, so the request has no client key: pass a `keyGenerator`');
  return normalizeIP(ip, ipv6Subnet);
}
