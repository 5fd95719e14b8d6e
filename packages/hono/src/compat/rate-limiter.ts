/**
 * hono-rate-limiter 0.5.4's `rateLimiter(config)`, behaviour for behaviour:
 * per request `skip` → `keyGenerator` → `store.increment(key)` → `limit`
 * (a number or a function of the context, read after the increment) → the
 * context variables → headers → refusal (`Retry-After`, then `handler`) or
 * `next()`, then the `skipFailedRequests`/`skipSuccessfulRequests`
 * decrement. A request is refused once its hits exceed the limit
 * (`totalHits > limit`), so `limit: 0` refuses every request. With
 * `binding` it runs on a Cloudflare Rate Limiting binding instead (no
 * store, no headers), as upstream.
 *
 * Where this differs from upstream (docs/migrating/hono-rate-limiter.md):
 * - a missing `keyGenerator`, or a store without `increment`, throws when
 *   the middleware is built (upstream: the store check throws the same
 *   `Error`; a missing key generator failed every request);
 * - an asynchronous store call is bounded by `storeTimeoutMs` (default 1 s):
 *   a dead store fails the request with a `RateKitError`
 *   (`ERR_RATEKIT_STORE`, Hono answers 500) instead of hanging it.
 *
 * @module
 */
import { RateKitOptionError, resolveStoreTimeoutMs, withStoreTimeout } from '@ratekit/core';
import type { Context, Env, Input, MiddlewareHandler, Next } from 'hono';
import { setDraft6Headers, setDraft7Headers, setRetryAfterHeader } from './headers.js';
import { MemoryStore } from './memory-store.js';
import type { CloudflareConfigProps, CloudflareConfigType, ConfigProps, HonoConfigProps, HonoConfigType, Promisify, RateLimitInfo, RateLimitStoreAccess, Store } from './types.js';

/** hono-rate-limiter's default refusal body. */
export const DEFAULT_MESSAGE = 'Too many requests, please try again later.';

/** ratekit's addition to hono-rate-limiter's options. */
export interface StoreTimeoutOption {
  /**
   * The longest an asynchronous store call may take, in ms (or `Infinity`).
   * A call that takes longer fails the request with a `RateKitError` of code
   * `ERR_RATEKIT_STORE` (Hono's `onError`, 500 by default).
   * @default 1_000
   */
  storeTimeoutMs?: number;
}

/**
 * hono-rate-limiter's middleware: a fixed window of `limit` requests per
 * `windowMs` and key, counted in a hono-rate-limiter `Store`.
 *
 * Options and defaults are hono-rate-limiter 0.5.4's: `keyGenerator`
 * (required), `windowMs` 60 000, `limit` 5, `message`, `statusCode` 429,
 * `handler`, `standardHeaders` `'draft-6'`, `requestPropertyName`
 * `'rateLimit'`, `requestStorePropertyName` `'rateLimitStore'`, `skip`,
 * `skipFailedRequests`, `skipSuccessfulRequests`, `requestWasSuccessful`,
 * `store` (a timer-free {@link MemoryStore}); or `binding` for Cloudflare's
 * Rate Limiting binding. Plus `storeTimeoutMs` (ratekit's).
 *
 * @throws {RateKitOptionError} when `keyGenerator` is not a function, or `storeTimeoutMs` is bad.
 * @throws {Error} `The store is not correctly implemented!` when `store` has no `increment` (upstream's error).
 * Per request, a store call that fails or outlasts `storeTimeoutMs` rejects (Hono answers 500).
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { rateLimiter } from '@ratekit/hono'; // was: from 'hono-rate-limiter'
 *
 * const app = new Hono();
 * app.use(rateLimiter({ windowMs: 15 * 60_000, limit: 100, keyGenerator: (c) => c.req.header('x-api-key') ?? 'anonymous' }));
 * ```
 * @see https://github.com/rhinobase/hono-rate-limiter (the behaviour followed)
 */
export function rateLimiter<E extends Env = Env, P extends string = string, I extends Input = Input>(config: ConfigProps<E, P, I> & StoreTimeoutOption): MiddlewareHandler<E, P, I> {
  if (typeof (config as { keyGenerator?: unknown }).keyGenerator !== 'function') {
    throw new RateKitOptionError('keyGenerator', 'a function of the context returning the key (hono-rate-limiter requires it)', (config as { keyGenerator?: unknown }).keyGenerator);
  }
  if ('binding' in config && config.binding !== undefined) return bindingRateLimiter(config as CloudflareConfigProps<E, P, I>);
  return storeRateLimiter(config);
}

/** The default `handler`: the status, then the message as text or JSON. */
async function defaultHandler<E extends Env, P extends string, I extends Input>(
  c: Context<E, P, I>,
  _next: Next,
  options: { statusCode: number; message: HonoConfigType<E, P, I>['message'] },
): Promise<Response> {
  c.status(options.statusCode as Parameters<typeof c.status>[0]);
  const message = typeof options.message === 'function' ? await options.message(c) : options.message;
  return typeof message === 'string' ? c.text(message) : c.json(message);
}

function storeRateLimiter<E extends Env, P extends string, I extends Input>(config: HonoConfigProps<E, P, I> & StoreTimeoutOption): MiddlewareHandler<E, P, I> {
  const { storeTimeoutMs: timeoutOption, ...given } = config;
  const storeTimeoutMs = resolveStoreTimeoutMs(timeoutOption);
  // A fresh object: the caller's options are never written to (upstream's test checks it).
  const options: HonoConfigType<E, P, I> = {
    windowMs: 60_000,
    limit: 5,
    message: DEFAULT_MESSAGE,
    statusCode: 429,
    standardHeaders: 'draft-6',
    requestPropertyName: 'rateLimit',
    requestStorePropertyName: 'rateLimitStore',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    skip: () => false,
    requestWasSuccessful: (c) => c.res.status < 400,
    handler: defaultHandler,
    store: undefined as unknown as Store<E, P, I>,
    ...withoutUndefined(given),
  };
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- `store` is unset until here when not given
  if (options.store === undefined) options.store = new MemoryStore<E, P, I>();
  const { windowMs, limit, standardHeaders, requestPropertyName, requestStorePropertyName, skipFailedRequests, skipSuccessfulRequests, skip, keyGenerator, requestWasSuccessful, handler, store } =
    options;
  initStore(store, options);
  const bounded = <T>(value: Promisify<T>): Promisify<T> => (value instanceof Promise ? withStoreTimeout(value, storeTimeoutMs, 'the store') : value);
  const storeAccess: RateLimitStoreAccess = { getKey: store.get?.bind(store), resetKey: store.resetKey.bind(store) };

  return async function rateLimiter(c, next) {
    if (await skip(c)) {
      await next();
      return;
    }
    const key = await keyGenerator(c);
    const { totalHits, resetTime } = await bounded(store.increment(key));
    const max = typeof limit === 'function' ? await limit(c) : limit;
    const info: RateLimitInfo = { limit: max, used: totalHits, remaining: Math.max(max - totalHits, 0), resetTime };
    setVariable(c, requestPropertyName, info);
    setVariable(c, requestStorePropertyName, storeAccess);
    if (standardHeaders && !c.finalized) {
      if (standardHeaders === 'draft-7') setDraft7Headers(c, info, windowMs);
      else setDraft6Headers(c, info, windowMs);
    }

    let decremented = false;
    const decrement = async () => {
      if (decremented) return;
      await bounded(store.decrement(key));
      decremented = true;
    };
    const settle = async () => {
      if (!skipFailedRequests && !skipSuccessfulRequests) return;
      const succeeded = await requestWasSuccessful(c);
      if ((skipFailedRequests && !succeeded) || (skipSuccessfulRequests && succeeded)) await decrement();
    };

    if (totalHits > max) {
      if (standardHeaders) setRetryAfterHeader(c, info, windowMs);
      await settle();
      return handler(c, next, options);
    }
    try {
      await next();
      await settle();
    } catch (error) {
      if (skipFailedRequests) await decrement();
      throw error;
    }
    return undefined;
  };
}

function bindingRateLimiter<E extends Env, P extends string, I extends Input>(config: CloudflareConfigProps<E, P, I>): MiddlewareHandler<E, P, I> {
  const { binding, keyGenerator, message = DEFAULT_MESSAGE, statusCode = 429, skip = () => false, handler = defaultHandler } = withoutUndefined<CloudflareConfigProps<E, P, I>>(config);
  return async function rateLimiter(c, next) {
    const options: CloudflareConfigType<E, P, I> = { message, statusCode, binding: typeof binding === 'function' ? binding(c) : binding, keyGenerator, skip, handler };
    if (await skip(c)) {
      await next();
      return;
    }
    const key = await keyGenerator(c);
    const { success } = await (options.binding as Exclude<typeof binding, (c: Context<E, P, I>) => unknown>).limit({ key });
    if (!success) return handler(c, next, options);
    await next();
    return undefined;
  };
}

/** As hono-rate-limiter's `initStore`: a store must have `increment`; `init` is called when it is a function. */
function initStore<E extends Env, P extends string, I extends Input>(store: Store<E, P, I>, options: HonoConfigType<E, P, I>): void {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass anything
  if (!store?.increment) throw new Error('The store is not correctly implemented!');
  if (typeof store.init === 'function') store.init(options);
}

function setVariable(c: Context, name: string, value: unknown): void {
  (c.set as (key: string, value: unknown) => void)(name, value);
}

/** Options given as `undefined` take their defaults (as upstream's destructuring defaults do). */
function withoutUndefined<T extends object>(object: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(object)) if (value !== undefined) out[name] = value;
  return out as T;
}
