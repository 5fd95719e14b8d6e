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
import { consumeInAnyForm, createLimiter, type Decision, DEFAULT_REFUSAL_MESSAGE, type HeaderList, type Limiter, RateKitError, rateLimitHeaders } from '@ratekit/core';
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
  const consume = consumeInAnyForm(limiter);
  const settles = skipFailedRequests || skipSuccessfulRequests;
  const reportBackground = (error: unknown) => onError(error instanceof RateKitError ? error : new RateKitError('ERR_RATEKIT_STORE', `background work failed: ${String(error)}`, { cause: error }));

  async function rateLimit(c: Ctx, next: Next): Promise<Response | undefined> {
    if (skip !== undefined && (await skip(c))) {
      await next();
      return undefined;
    }
    let id: KeyResult;
    try {
      id = await keyOf(c);
    } catch (error) {
      if (error instanceof RateKitError) throw error;
      throw new RateKitError('ERR_RATEKIT_KEY', `${keyLabel} threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (id === false) {
      await next();
      return undefined;
    }
    const key = toKey(id, keyLabel);
    const decision = await (needsContext ? consume(key, { context: c }) : consume(key));
    (c.set as (name: string, value: unknown) => void)(requestPropertyName, decision);
    if (onDecision !== undefined) {
      const done = onDecision(decision, c);
      if (done instanceof Promise) await afterResponse(c, done, reportBackground);
    }

    if (!decision.allowed) {
      write(c, headersFor(decision, key));
      if (handler !== undefined) return handler(c, decision);
      const body = typeof message === 'function' ? await message(c, decision) : (message ?? DEFAULT_REFUSAL_MESSAGE);
      c.status(statusCode as Parameters<typeof c.status>[0]);
      return typeof body === 'string' ? c.text(body) : c.json(body);
    }

    if (anyHeaders) write(c, headersFor(decision, key));
    if (decision.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
    if (!settles) {
      await next();
      return undefined;
    }
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
    return undefined;
  }

  /** Gives the decision's cost back (background work). */
  function refund(c: Ctx, key: string, decision: Decision): Promise<unknown> {
    return Promise.resolve(limiter.refund(key, needsContext ? { cost: decision.cost, context: c } : { cost: decision.cost }));
  }

  function headersFor(decision: Decision, key: string): Readonly<HeaderList> {
    // draft-8+ carries the key, hashed, as `pk`, as the other adapters do.
    return rateLimitHeaders(decision, listHeaders ? { ...headerOptions, partitionKey: key } : headerOptions);
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
