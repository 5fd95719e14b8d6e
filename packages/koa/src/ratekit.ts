/**
 * ratekit mode: the Koa middleware on @ratekit/core's gate (skip, key, decision, headers, refusal
 * body, delay hold), given koa-ratelimit's names translated once (options.ts). Koa's
 * part: the address is `ctx.ip` (it honours `app.proxy`), `blacklist` refuses first with
 * `ctx.throw(403)`, the decision goes on `ctx.state.rateLimit`, fields go on `ctx.res` (legacy
 * names renamed by `headers`), a refusal is `ctx.status`/`ctx.body`, or a throw in `throw` mode,
 * after `onLimited`. Plain functions returning promises, not one `async` function: with the
 * in-memory store nothing is awaited, and the promise returned is `next()`'s own.
 *
 * @module
 */
import { createGate, type Decision, type GateDecided, type GateOutcome, type HeaderList, holdFor, type Limiter, type MaybePromise } from '@ratekit/core';
import type { DefaultContext, DefaultState, Middleware, Next, ParameterizedContext } from 'koa';
import { OPTION_NAMES, type RateLimitOptions, resolveOptions } from './options.js';

/** What a ratekit-mode middleware puts on `ctx.state`: the decision of the last one the request went through. */
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

export function rateKitRatelimit<StateT, ContextT>(options: RateLimitOptions<ParameterizedContext<StateT, ContextT>> | undefined): RateLimitMiddleware<StateT, ContextT> {
  type Ctx = ParameterizedContext<StateT, ContextT>;
  const resolved = resolveOptions(options);
  const { blacklist, rename, onLimited } = resolved;
  // Retry-After on every refusal, `disableHeader` or not, as koa-ratelimit; one value per field (`err.headers` in throw mode is an object).
  const gate = createGate(resolved.gate, {
    name: 'ratelimit()',
    standardHeaders: false,
    keyOption: '`id(ctx)`',
    headers: { retryAfter: true, combineLists: true },
    optionNames: OPTION_NAMES,
    forwardedFor: () => undefined,
  });

  function ratelimit(ctx: Ctx, next: Next): Promise<void> {
    if (blacklist !== undefined) return blacklisted(ctx, next, blacklist);
    const outcome = gate.decide(ctx, ctx.ip);
    return outcome instanceof Promise ? outcome.then((o) => respond(ctx, next, o)) : respond(ctx, next, outcome);
  }

  /** `blacklist` first: true refuses with `ctx.throw(403, 'Forbidden')`, before `whitelist` and `id`. */
  async function blacklisted(ctx: Ctx, next: Next, listed: (ctx: Ctx) => boolean | Promise<boolean>): Promise<void> {
    if (await listed(ctx)) ctx.throw(403, 'Forbidden');
    return respond(ctx, next, await gate.decide(ctx, ctx.ip));
  }

  function respond(ctx: Ctx, next: Next, outcome: GateOutcome): Promise<void> {
    if (outcome.key === undefined) return next();
    const { decision } = outcome;
    (ctx.state as RateLimitState).rateLimit = decision;
    const headers = rename(outcome.headers);
    // What `ctx.set(name, value)` does for a string value, without the arrays Koa 3's `set` builds per call.
    if (!ctx.headerSent) gate.writeHeaders(headers, ctx, setField, appendField);
    if (!decision.allowed) return refuse(ctx, outcome, headers);
    if (decision.delayMs > 0) return held(ctx, next, decision.delayMs);
    return next();
  }

  function refuse(ctx: Ctx, { decision }: GateDecided, headers: Readonly<HeaderList>): Promise<void> {
    const body = gate.refusalBody(ctx, decision);
    if (body instanceof Promise) return body.then((b) => refused(ctx, decision, headers, b));
    return refused(ctx, decision, headers, body);
  }

  function refused(ctx: Ctx, decision: Decision, headers: Readonly<HeaderList>, body: unknown): Promise<void> {
    ctx.status = gate.statusCode;
    ctx.body = body;
    if (onLimited === undefined && !resolved.throw) return DONE;
    return limited(ctx, decision, headers);
  }

  async function limited(ctx: Ctx, decision: Decision, headers: Readonly<HeaderList>): Promise<void> {
    if (onLimited !== undefined) await onLimited(ctx, decision);
    if (resolved.throw) {
      const body: unknown = ctx.body;
      const props = { headers: Object.fromEntries(headers) };
      if (typeof body === 'string') ctx.throw(ctx.status, body, props);
      ctx.throw(ctx.status, { ...props, body });
    }
  }

  const middleware = ratelimit as unknown as RateLimitMiddleware<StateT, ContextT>;
  Object.defineProperties(middleware, {
    limiter: { value: gate.limiter, enumerable: true },
    resetKey: { value: (key: string) => gate.limiter.reset(key), enumerable: true },
  });
  return middleware;
}

const setField = (ctx: ParameterizedContext, name: string, value: string) => ctx.res.setHeader(name, value);
const appendField = (ctx: ParameterizedContext, name: string, value: string) => ctx.append(name, value);

/** What a refusal without `onLimited` or `throw` returns: nothing is left to wait for. */
const DONE: Promise<void> = Promise.resolve();

/** Holds a pass for `delayMs`, then goes on; a client that leaves first ends the hold, and downstream never runs for it. */
function held(ctx: ParameterizedContext, next: Next, delayMs: number): Promise<void> {
  const aborting = new AbortController();
  ctx.res.once('close', () => aborting.abort());
  return holdFor(delayMs, aborting.signal).then(() => (aborting.signal.aborted ? undefined : next()));
}
