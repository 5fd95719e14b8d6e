import { setTimeout as sleep } from 'node:timers/promises';
import {
  consumeInAnyForm,
  createLimiter,
  type Decision,
  DEFAULT_REFUSAL_MESSAGE,
  type HeaderList,
  headerListOf,
  ipKeyGenerator,
  type Limiter,
  type MaybePromise,
  RateKitError,
  rateLimitHeaders,
} from '@ratekit/core';
import type { DefaultContext, DefaultState, Middleware, Next, ParameterizedContext } from 'koa';
import { compatRatelimit, type KoaRatelimitMiddleware } from './compat/middleware.js';
import { isRateKitMode, type RateKitOptionName } from './mode.js';
import { type KeyResult, type RateLimitOptions, resolveOptions } from './options.js';

/**
 * What a ratekit-mode middleware puts on `ctx.state`: the decision of the last one the request
 * went through. (A koa-ratelimit-mode middleware puts koa-ratelimit's `KoaRatelimitState` there,
 * on refusals only.)
 */
export interface RateLimitState {
  rateLimit?: Decision;
}

/** The middleware {@link ratelimit} returns in ratekit mode, with its limiter for manual use. */
export type RateLimitMiddleware<StateT = DefaultState, ContextT = DefaultContext> = Middleware<StateT, ContextT> & {
  /** The limiter behind the middleware (namespace = `namespace`): `peek`, `refund`, `reset` keys by hand. */
  readonly limiter: Limiter<ParameterizedContext<StateT, ContextT>>;
  /** Forgets a key's state under this middleware's limits, e.g. after a successful login. */
  resetKey(key: string): MaybePromise<void>;
};

/**
 * Options that choose ratekit mode: {@link RateLimitOptions} with at least
 * one ratekit-only option (`algorithm`, `limits`, `cost`,
 * `standardHeaders`, `legacyHeaders`, `store`, `onStoreError`, `onError`,
 * `now`).
 */
export type RateKitModeOptions<TContext> = RateLimitOptions<TContext> & { [K in RateKitOptionName]-?: Required<Pick<RateLimitOptions<TContext>, K>> }[RateKitOptionName];

/**
 * Koa rate-limiting middleware, in one of two modes chosen by its options.
 *
 * **koa-ratelimit mode** (only koa-ratelimit 6's options: `driver`, `db`,
 * `duration`, `max`, `id`, `namespace`, `headers`, `disableHeader`,
 * `whitelist`, `blacklist`, `errorMessage`, `status`, `throw`,
 * `onLimited`; plus `storeTimeoutMs` and `maxKeys`): behaves as
 * koa-ratelimit 6, same headers, bytes, order and state: the memory
 * driver's state lives in the `db` Map (bounded by `maxKeys`, default
 * 100 000), the Redis driver's in koa-ratelimit's own sorted sets
 * (`<namespace>:<id>`) on the ioredis client `db`, so old and new instances
 * share counts during a rolling deploy. Without `driver`, a Redis client as
 * `db` selects `'redis'`, anything else `'memory'`. The default refusal is
 * 429 `Rate limit exceeded, retry in <ms long>.` (see src/compat/).
 *
 * **ratekit mode** (any of ratekit's options: `algorithm`, `limits`,
 * `cost`, `standardHeaders`, `legacyHeaders`, `store`, `onStoreError`,
 * `onError`, `now`): runs on @ratekit/core. Per request, in order:
 * `blacklist` (true → `ctx.throw(403, 'Forbidden')`), `whitelist` (true →
 * pass, uncounted, no headers), `id` (`false` → the same), then one
 * decision of the limiter, put on `ctx.state.rateLimit`, with headers from
 * @ratekit/core's header module. An admitted request goes on to `next()`
 * (held first for the `delay` algorithm's `delayMs`); a refused one is
 * answered with `status` (429) and `errorMessage` (default
 * @ratekit/core's `DEFAULT_REFUSAL_MESSAGE`), or thrown in `throw` mode.
 * `X-RateLimit-Reset` is whole epoch seconds rounded up; `Retry-After` is
 * rounded up and at least 1.
 *
 * @throws {RateKitOptionError} when built with a bad option (code `ERR_RATEKIT_INVALID_OPTION`).
 * Per request, the middleware rejects with a `RateKitError` of code
 * `ERR_RATEKIT_STORE` when the store (or Redis) fails or does not answer
 * within `storeTimeoutMs` (default 1 s), and in ratekit mode
 * `ERR_RATEKIT_KEY` when `id` throws or returns no usable key; Koa
 * answers them with 500.
 * @see https://github.com/koajs/ratelimit (the options and behaviour koa-ratelimit mode follows)
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { Redis } from 'ioredis';
 * import { ratelimit } from '@ratekit/koa'; // was: import ratelimit from 'koa-ratelimit'
 *
 * const app = new Koa();
 * // koa-ratelimit mode: the same keys and counts as koa-ratelimit 6.
 * app.use(ratelimit({ driver: 'redis', db: new Redis(), duration: 60_000, max: 100 }));
 * // ratekit mode: a token bucket on @ratekit/core.
 * app.use(ratelimit({ algorithm: 'token-bucket', duration: 60_000, max: 100, standardHeaders: 'draft-8' }));
 * ```
 */
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(options: RateKitModeOptions<ParameterizedContext<StateT, ContextT>>): RateLimitMiddleware<StateT, ContextT>;
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(options?: RateLimitOptions<ParameterizedContext<StateT, ContextT>>): KoaRatelimitMiddleware<StateT, ContextT>;
export function ratelimit<StateT = DefaultState, ContextT = DefaultContext>(
  options?: RateLimitOptions<ParameterizedContext<StateT, ContextT>>,
): RateLimitMiddleware<StateT, ContextT> | KoaRatelimitMiddleware<StateT, ContextT> {
  if (!isRateKitMode(options)) return compatRatelimit<StateT, ContextT>((options ?? {}) as Record<string, unknown>);
  return rateKitRatelimit<StateT, ContextT>(options);
}

/** ratekit mode: the middleware on @ratekit/core. */
function rateKitRatelimit<StateT, ContextT>(options: RateLimitOptions<ParameterizedContext<StateT, ContextT>> | undefined): RateLimitMiddleware<StateT, ContextT> {
  type Ctx = ParameterizedContext<StateT, ContextT>;
  const resolved = resolveOptions(options);
  const { whitelist, blacklist, renames, errorMessage, status, onLimited, headerOptions, anyHeaders, listHeaders, needsContext } = resolved;
  const limiter = createLimiter<Ctx>({
    limits: resolved.limits,
    store: resolved.store,
    prefix: resolved.namespace,
    cost: options?.cost,
    now: options?.now,
    onStoreError: options?.onStoreError,
    storeTimeoutMs: options?.storeTimeoutMs,
    onError: options?.onError,
    refusalCache: options?.refusalCache,
  });
  // A cached refusal comes back as a value, not a Promise: no closure, no microtask.
  const consume = consumeInAnyForm(limiter);
  // Without list fields (no partition key), the headers are built once per second of a flood, not once per refusal.
  const sharedList = listHeaders ? undefined : headerListOf(headerOptions);
  const keyOf = resolved.id ?? ((ctx: Ctx) => ipKeyGenerator(ctx.ip));
  const keyLabel = resolved.id === undefined ? 'the default `id` (`ctx.ip`)' : '`id(ctx)`';

  // The request path is plain functions returning promises, not one `async`
  // function: with the in-memory store and plain options nothing is awaited,
  // and the promise returned is `next()`'s own (an `async` wrapper would add
  // a promise and two microtask turns to every request).
  function ratelimit(ctx: Ctx, next: Next): Promise<void> {
    try {
      return blacklist === undefined && whitelist === undefined ? limit(ctx, next) : listed(ctx, next);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `blacklist` (403), then `whitelist` (pass, uncounted), then {@link limit}. */
  async function listed(ctx: Ctx, next: Next): Promise<void> {
    if (blacklist !== undefined) {
      let listed = blacklist(ctx);
      if (listed instanceof Promise) listed = await listed;
      if (listed) ctx.throw(403, 'Forbidden');
    }
    if (whitelist !== undefined) {
      let listed = whitelist(ctx);
      if (listed instanceof Promise) listed = await listed;
      if (listed) {
        await next();
        return;
      }
    }
    return limit(ctx, next);
  }

  function limit(ctx: Ctx, next: Next): Promise<void> {
    let id: KeyResult | Promise<KeyResult>;
    try {
      id = keyOf(ctx);
    } catch (error) {
      throw keyError(error);
    }
    if (id instanceof Promise) {
      return id.then(
        (resolved) => decide(ctx, next, resolved),
        (error: unknown) => {
          throw keyError(error);
        },
      );
    }
    return decide(ctx, next, id);
  }

  function decide(ctx: Ctx, next: Next, id: KeyResult): Promise<void> {
    if (id === false) return next();
    const key = toKey(id, keyLabel);
    const decision = needsContext ? consume(key, { context: ctx }) : consume(key);
    if (decision instanceof Promise) return decision.then((d) => respond(ctx, next, key, d));
    return respond(ctx, next, key, decision);
  }

  function respond(ctx: Ctx, next: Next, key: string, decision: Decision): Promise<void> {
    (ctx.state as RateLimitState).rateLimit = decision;
    if (decision.allowed) {
      if (anyHeaders) write(ctx, headersFor(decision, key));
      if (decision.delayMs > 0) return sleep(decision.delayMs).then(() => next());
      return next();
    }

    // Refusals always get headers: at least Retry-After, as in koa-ratelimit.
    const headers = headersFor(decision, key);
    write(ctx, headers);
    ctx.status = status;
    ctx.body = errorMessage === undefined ? DEFAULT_REFUSAL_MESSAGE : typeof errorMessage === 'function' ? errorMessage(ctx, decision) : errorMessage;
    if (onLimited === undefined && !resolved.throw) return DONE;
    return limited(ctx, decision, headers);
  }

  /** The rest of a refusal: `onLimited`, then the throw of `throw` mode. */
  async function limited(ctx: Ctx, decision: Decision, headers: Readonly<HeaderList>): Promise<void> {
    if (onLimited !== undefined) {
      const done = onLimited(ctx, decision);
      if (done instanceof Promise) await done;
    }
    if (resolved.throw) {
      const body: unknown = ctx.body;
      const props = { headers: asObject(headers) };
      if (typeof body === 'string') ctx.throw(ctx.status, body, props);
      ctx.throw(ctx.status, { ...props, body });
    }
  }

  function keyError(error: unknown): RateKitError {
    return new RateKitError('ERR_RATEKIT_KEY', `${keyLabel} threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  /** The core's headers for a decision (one entry per field: `combineLists`), with the `headers` renames applied. */
  function headersFor(decision: Decision, key: string): Readonly<HeaderList> {
    // draft-8+ carries the key, hashed, as `pk`, as express-rate-limit and @ratekit/express do.
    const list = sharedList === undefined ? rateLimitHeaders(decision, { ...headerOptions, partitionKey: key }) : sharedList(decision);
    if (renames === undefined) return list;
    return list.map(([name, value]): [string, string] => [renames.get(name.toLowerCase()) ?? name, value]);
  }

  function write(ctx: Ctx, headers: Readonly<HeaderList>): void {
    // What `ctx.set(name, value)` does for a string value, without the arrays Koa 3's `set` builds per call.
    if (ctx.headerSent) return;
    const res = ctx.res;
    for (let i = 0; i < headers.length; i++) {
      const [name, value] = headers[i]!;
      // draft-8+ fields are lists: append, so a stacked middleware adds its policy instead of replacing the other's.
      if (listHeaders && isListField(name)) ctx.append(name, value);
      else res.setHeader(name, value);
    }
  }

  const middleware = ratelimit as unknown as RateLimitMiddleware<StateT, ContextT>;
  Object.defineProperties(middleware, {
    limiter: { value: limiter, enumerable: true },
    resetKey: { value: (key: string) => limiter.reset(key), enumerable: true },
  });
  return middleware;
}

/** What a refusal without `onLimited` or `throw` returns: nothing is left to wait for. */
const DONE: Promise<void> = Promise.resolve();

function toKey(id: unknown, label: string): string {
  if (typeof id === 'string' && id.length > 0) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are described above; String() only sees primitives and functions
  const got = typeof id === 'string' ? '""' : id === null ? 'null' : typeof id === 'object' ? 'an object' : String(id);
  throw new RateKitError('ERR_RATEKIT_KEY', `Expected ${label} to return a non-empty string, a number, or false to skip limiting, got ${got}`);
}

/** `err.headers` for throw mode. */
function asObject(headers: Readonly<HeaderList>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = value;
  return out;
}

function isListField(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'ratelimit' || lower === 'ratelimit-policy';
}
