/**
 * ratekit mode: Hono middleware on @ratekit/core. Per request: `skip` → key
 * → one decision of the limiter (put on the context as `rateLimit`) →
 * headers → `next()` (held first for the `delay` algorithm's `delayMs`) or
 * the refusal. After the response, the cost is given back when
 * `skipFailedRequests`/`skipSuccessfulRequests` say so, and `onDecision`
 * runs: both are background work, handed to `c.executionCtx.waitUntil`
 * where the runtime has it (background.ts).
 *
 * @module
 */
import { consumeInAnyForm, createLimiter, type Decision, DEFAULT_REFUSAL_MESSAGE, type HeaderList, headerListOf, holdFor, type Limiter, RateKitError, rateLimitHeaders } from '@ratekit/core';
import type { Context, Env, Input, MiddlewareHandler, Next } from 'hono';
import { afterResponse } from './background.js';
import { type KeyResult, type RateLimitOptions, resolveOptions } from './options.js';

/** The middleware {@link rateLimit} returns, with its limiter for manual use. */
export type RateLimitMiddleware<E extends Env = Env, P extends string = string, I extends Input = Input> = MiddlewareHandler<E, P, I> & {
  /** The limiter behind the middleware: `peek`, `refund`, `reset` keys by hand. */
  readonly limiter: Limiter<Context<E, P, I>>;
};

/**
 * Rate-limiting middleware for Hono 4 on @ratekit/core: every algorithm,
 * all-or-nothing policies, costs and blocks, every ratekit store, the
 * draft-6/7/8 and legacy headers, and a client-IP key on every runtime.
 *
 * The decision is put on the context (`c.get('rateLimit')`, a core
 * `Decision`). A refusal is answered with `statusCode` (429) and `message`,
 * or by `handler`, after the headers and `Retry-After` (whole seconds,
 * rounded up, at least 1) are set.
 *
 * @throws {RateKitOptionError} when built with a bad option (code `ERR_RATEKIT_INVALID_OPTION`),
 * e.g. without `keyGenerator` or `getConnInfo`. Per request, the middleware rejects with a
 * `RateKitError` of code `ERR_RATEKIT_STORE` when the store fails or does not answer within
 * `storeTimeoutMs` (with `onStoreError: 'throw'`, the default), and `ERR_RATEKIT_KEY` when the key
 * cannot be had; Hono's `onError` answers them (500).
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { getConnInfo } from 'hono/bun';
 * import { rateLimit } from '@ratekit/hono';
 *
 * const app = new Hono();
 * app.use(rateLimit({ getConnInfo, algorithm: 'gcra', limit: 100, windowMs: 60_000, standardHeaders: 'draft-8' }));
 * ```
 * @see https://github.com/ratekit/ratekit/tree/main/packages/hono
 */
export function rateLimit<E extends Env = Env, P extends string = string, I extends Input = Input>(options: RateLimitOptions<Context<E, P, I>>): RateLimitMiddleware<E, P, I> {
  type Ctx = Context<E, P, I>;
  const resolved = resolveOptions(options);
  const { keyOf, keyLabel, headerOptions, anyHeaders, listHeaders, needsContext, statusCode, requestPropertyName } = resolved;
  const { skip, message, handler, onDecision, skipFailedRequests = false, skipSuccessfulRequests = false } = options;
  const requestWasSuccessful = options.requestWasSuccessful ?? ((c: Ctx) => c.res.status < 400);
  const onError = options.onError ?? ((error: RateKitError) => console.error(error));
  const limiter = createLimiter<Ctx>({
    limits: resolved.limits,
    store: options.store,
    prefix: options.prefix,
    cost: options.cost,
    now: options.now,
    onStoreError: options.onStoreError,
    storeTimeoutMs: options.storeTimeoutMs,
    onError,
    refusalCache: options.refusalCache,
  });
  // A cached refusal comes back as a value, not a Promise.
  const consume = consumeInAnyForm(limiter);
  // Without list fields (no partition key), the header list is rebuilt only when its figures change.
  const sharedList = listHeaders ? undefined : headerListOf(headerOptions);
  const settles = skipFailedRequests || skipSuccessfulRequests;
  const reportBackground = (error: unknown) => onError(error instanceof RateKitError ? error : new RateKitError('ERR_RATEKIT_STORE', `background work failed: ${String(error)}`, { cause: error }));

  // The request path is plain functions returning promises, not one `async` function: with the memory
  // store and a synchronous key nothing is awaited, and an admitted request returns `next()`'s own
  // promise (each `await` of a value that is not a Promise would cost a microtask turn per request).
  function rateLimit(c: Ctx, next: Next): Promise<Response | void> {
    try {
      return skip === undefined ? keyed(c, next) : skipping(c, next, skip);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async function skipping(c: Ctx, next: Next, skipped: (c: Ctx) => boolean | Promise<boolean>): Promise<Response | void> {
    if (await skipped(c)) return next();
    return keyed(c, next);
  }

  function keyed(c: Ctx, next: Next): Promise<Response | void> {
    let id: KeyResult | Promise<KeyResult>;
    try {
      id = keyOf(c);
    } catch (error) {
      throw keyError(error);
    }
    if (id instanceof Promise) {
      return id.then(
        (resolvedId) => decide(c, next, resolvedId),
        (error: unknown) => {
          throw keyError(error);
        },
      );
    }
    return decide(c, next, id);
  }

  function decide(c: Ctx, next: Next, id: KeyResult): Promise<Response | void> {
    if (id === false) return next();
    const key = toKey(id, keyLabel);
    const decision = needsContext ? consume(key, { context: c }) : consume(key);
    if (decision instanceof Promise) return decision.then((d) => respond(c, next, key, d));
    return respond(c, next, key, decision);
  }

  function respond(c: Ctx, next: Next, key: string, decision: Decision): Promise<Response | void> {
    (c.set as (name: string, value: unknown) => void)(requestPropertyName, decision);
    if (onDecision !== undefined) {
      const done = onDecision(decision, c);
      if (done instanceof Promise) return afterResponse(c, done, reportBackground).then(() => answer(c, next, key, decision));
    }
    return answer(c, next, key, decision);
  }

  function answer(c: Ctx, next: Next, key: string, decision: Decision): Promise<Response | void> {
    if (!decision.allowed) return refuse(c, key, decision);
    if (anyHeaders) write(c, headersFor(decision, key));
    if (decision.delayMs > 0) return holdFor(decision.delayMs, c.req.raw.signal).then(() => proceed(c, next, key, decision));
    return proceed(c, next, key, decision);
  }

  async function refuse(c: Ctx, key: string, decision: Decision): Promise<Response> {
    write(c, headersFor(decision, key));
    if (handler !== undefined) return handler(c, decision);
    const body = typeof message === 'function' ? await message(c, decision) : (message ?? DEFAULT_REFUSAL_MESSAGE);
    c.status(statusCode as Parameters<typeof c.status>[0]);
    return typeof body === 'string' ? c.text(body) : c.json(body);
  }

  function proceed(c: Ctx, next: Next, key: string, decision: Decision): Promise<void> {
    return settles ? settle(c, next, key, decision) : next();
  }

  /** `next()`, then the refund `skipFailedRequests`/`skipSuccessfulRequests` ask for, after the response. */
  async function settle(c: Ctx, next: Next, key: string, decision: Decision): Promise<void> {
    let succeeded: boolean;
    try {
      await next();
      // Hono turns a handler's throw into c.error and an error response; both count as failures.
      succeeded = c.error === undefined && (await requestWasSuccessful(c));
    } catch (error) {
      if (skipFailedRequests) await afterResponse(c, refund(c, key, decision), reportBackground);
      throw error;
    }
    if ((skipFailedRequests && !succeeded) || (skipSuccessfulRequests && succeeded)) await afterResponse(c, refund(c, key, decision), reportBackground);
  }

  function keyError(error: unknown): RateKitError {
    if (error instanceof RateKitError) return error;
    return new RateKitError('ERR_RATEKIT_KEY', `${keyLabel} threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  /** Gives the decision's cost back (background work). */
  function refund(c: Ctx, key: string, decision: Decision): Promise<unknown> {
    return Promise.resolve(limiter.refund(key, needsContext ? { cost: decision.cost, context: c } : { cost: decision.cost }));
  }

  function headersFor(decision: Decision, key: string): Readonly<HeaderList> {
    // draft-8+ carries the key, hashed, as `pk`, as the other adapters do.
    return sharedList === undefined ? rateLimitHeaders(decision, { ...headerOptions, partitionKey: key }) : sharedList(decision);
  }

  function write(c: Ctx, headers: Readonly<HeaderList>): void {
    if (c.finalized) return;
    for (const [name, value] of headers) {
      // draft-8+ fields are lists: a stacked middleware adds its policy instead of replacing the other's.
      const list = listHeaders && (name.toLowerCase() === 'ratelimit' || name.toLowerCase() === 'ratelimit-policy');
      c.header(name, value, list ? { append: true } : undefined);
    }
  }

  Object.defineProperty(rateLimit, 'limiter', { value: limiter, enumerable: true });
  return rateLimit as unknown as RateLimitMiddleware<E, P, I>;
}

function toKey(id: unknown, label: string): string {
  if (typeof id === 'string' && id.length > 0) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are described; String() only sees primitives here
  const got = typeof id === 'string' ? '""' : id === null ? 'null' : typeof id === 'object' ? 'an object' : String(id);
  throw new RateKitError('ERR_RATEKIT_KEY', `Expected ${label} to return a non-empty string, a number, or false to skip limiting, got ${got}`);
}
