/**
 * ratekit mode: Hono middleware on @ratekit/core's gate (skip, key, decision, headers, refusal
 * body, delay hold, background work). Hono's part: the client address comes from the runtime's
 * `getConnInfo`, the decision is put on the context, fields are set with `c.header`, a refusal is
 * `c.text`/`c.json`, background work goes to `c.executionCtx.waitUntil` where the runtime has one;
 * hono-rate-limiter's refunds after the response are refund.ts.
 *
 * @module
 */
import { createGate, type Decision, type GateOutcome, type HeaderList, holdFor, type Limiter, type MaybePromise, RateKitError, type WaitUntil } from '@ratekit/core';
import type { Context, Env, Input, MiddlewareHandler, Next } from 'hono';
import { RENAMED } from './incumbent-options.js';
import { settler } from './refund.js';
import { HONO_OPTIONS, type RateLimitOptions, resolveHonoOptions } from './options.js';

/** The middleware {@link rateLimit} returns, with its limiter for manual use. */
export type RateLimitMiddleware<E extends Env = Env, P extends string = string, I extends Input = Input> = MiddlewareHandler<E, P, I> & {
  /** The limiter behind the middleware: `peek`, `refund`, `reset` keys by hand. */
  readonly limiter: Limiter<Context<E, P, I>>;
};

/**
 * Rate-limiting middleware for Hono 4 on @ratekit/core, on every runtime. The decision is put on
 * the context (`c.get('rateLimit')`, a core `Decision`). A refusal is answered with `statusCode`
 * (429) and `message`, or by `handler`, after the headers and `Retry-After` (whole seconds, rounded
 * up, at least 1) are set.
 *
 * @throws {RateKitOptionError} when built with a bad option (code `ERR_RATEKIT_INVALID_OPTION`),
 * e.g. without `keyGenerator` or `getConnInfo`. Per request, it rejects with a `RateKitError`, which
 * Hono's `onError` answers (500): `ERR_RATEKIT_STORE` when the store fails or does not answer
 * within `storeTimeoutMs` (under `onStoreError: 'throw'`, the default), `ERR_RATEKIT_KEY` when the
 * key cannot be had.
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
  // Retry-After on every refusal and draft-8+ lists appended, as hono-rate-limiter sends them.
  const gate = createGate(options, {
    name: 'rateLimit()',
    options: HONO_OPTIONS,
    renamed: RENAMED,
    standardHeaders: 'draft-6',
    headers: { retryAfter: true, combineLists: true },
    forwardedFor: (c) => c.req.header('x-forwarded-for'),
  });
  const refunds = resolveHonoOptions(options);
  const { requestPropertyName } = refunds;
  const { getConnInfo, handler, onDecision } = options;
  const settle = settler(gate, refunds, waitUntilOf);

  function addressOf(c: Ctx): string | undefined {
    if (getConnInfo === undefined) return undefined;
    const address = getConnInfo(c).remote.address;
    if (typeof address === 'string' && address !== '') return address;
    throw new RateKitError('ERR_RATEKIT_KEY', 'getConnInfo(c) gave no client address (is it the helper for this runtime?): pass a `keyGenerator` for requests without one');
  }

  function rateLimit(c: Ctx, next: Next): Promise<Response | void> {
    let outcome: MaybePromise<GateOutcome>;
    try {
      outcome = gate.decide(c, addressOf(c));
    } catch (error) {
      return Promise.reject(error);
    }
    return outcome instanceof Promise ? outcome.then((o) => respond(c, next, o)) : respond(c, next, outcome);
  }

  function respond(c: Ctx, next: Next, outcome: GateOutcome): Promise<Response | void> {
    if (outcome.key === undefined) return next();
    (c.set as (name: string, value: unknown) => void)(requestPropertyName, outcome.decision);
    // Only with a hook: off Workers, `c.executionCtx` throws, and building that error costs ~13 µs per request.
    const observed = onDecision === undefined ? undefined : gate.observe(outcome, c, waitUntilOf(c));
    const { key, decision, headers } = outcome;
    if (observed !== undefined) return observed.then(() => answer(c, next, key, decision, headers));
    return answer(c, next, key, decision, headers);
  }

  function answer(c: Ctx, next: Next, key: string, decision: Decision, headers: Readonly<HeaderList>): Promise<Response | void> {
    // draft-8+ lists appended, so a stacked middleware adds its policy instead of replacing the other's.
    if (!c.finalized) gate.writeHeaders(headers, c, setField, appendField);
    if (!decision.allowed) return refuse(c, decision);
    if (decision.delayMs > 0) return holdFor(decision.delayMs, c.req.raw.signal).then(() => proceed(c, next, key, decision));
    return proceed(c, next, key, decision);
  }

  async function refuse(c: Ctx, decision: Decision): Promise<Response> {
    if (handler !== undefined) return handler(c, decision);
    const body = await gate.refusalBody(c, decision);
    c.status(gate.statusCode as Parameters<typeof c.status>[0]);
    return typeof body === 'string' ? c.text(body) : c.json(body);
  }

  function proceed(c: Ctx, next: Next, key: string, decision: Decision): Promise<void> {
    return settle === undefined ? next() : settle(c, next, key, decision);
  }

  Object.defineProperty(rateLimit, 'limiter', { value: gate.limiter, enumerable: true });
  return rateLimit as unknown as RateLimitMiddleware<E, P, I>;
}

const setField = (c: Context, name: string, value: string) => c.header(name, value);
const appendField = (c: Context, name: string, value: string) => c.header(name, value, { append: true });

/** The context's `waitUntil`, bound, or undefined: Hono's `c.executionCtx` throws "This context has no ExecutionContext" off Workers. */
function waitUntilOf(c: Context): WaitUntil | undefined {
  let ctx: { waitUntil?: unknown };
  try {
    ctx = c.executionCtx;
  } catch {
    return undefined;
  }
  const { waitUntil } = ctx;
  if (typeof waitUntil !== 'function') return undefined;
  return (promise) => {
    (waitUntil as WaitUntil).call(ctx, promise);
  };
}
