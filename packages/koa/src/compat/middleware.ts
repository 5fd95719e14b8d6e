import type { Middleware, Next, ParameterizedContext } from 'koa';
import { type CompatParams, resolveCompatOptions } from './options.js';
import { defaultRefusalMessage, refusalTiming } from './responses.js';

/** What koa-ratelimit 6 puts on `ctx.state.rateLimit` when it refuses a request (nothing when it admits one). */
export interface KoaRatelimitState {
  /** `Retry-After`: whole seconds until the reset, truncated (0 in a window's last second). */
  after: number;
  /** The rate-limit headers sent, by name (empty with `disableHeader`; with `throw`, `Retry-After` too). */
  headers: Record<string, number>;
  /** What `id(ctx)` returned. */
  id: unknown;
  /** The refusal body. */
  message: unknown;
}

/** A koa-ratelimit-mode middleware, with `resetKey` to forget a client's count (e.g. after a successful login). */
export type KoaRatelimitMiddleware<StateT, ContextT> = Middleware<StateT, ContextT> & {
  /** Forgets `<namespace>:<id>` in the driver's Map or Redis. Rejects with `ERR_RATEKIT_STORE` when Redis fails or times out. */
  resetKey(id: string): Promise<void>;
};

/**
 * koa-ratelimit 6's middleware, behaviour for behaviour (see
 * docs/migrating/koa-ratelimit.md for the few deliberate differences). Per
 * request, in upstream's order:
 *
 * 1. `id(ctx)` (synchronous; its throw fails the request), then
 *    `whitelist(ctx)` and `blacklist(ctx)` (awaited);
 * 2. blacklisted → `ctx.throw(403, 'Forbidden')`; `id` returned `false` or
 *    whitelisted → `next()`, uncounted, no headers;
 * 3. the driver counts the request under `<namespace>:<id>`
 *    (src/compat/memory-driver.ts, src/compat/redis-driver.ts);
 * 4. unless `disableHeader`: `X-RateLimit-Remaining` (left after this
 *    request), `X-RateLimit-Reset` (epoch seconds: with a fraction on the
 *    memory driver, whole on Redis), `X-RateLimit-Limit`, names from
 *    `headers`;
 * 5. admitted → `next()`; refused → body `errorMessage` (or
 *    `Rate limit exceeded, retry in <ms long>.`), `Retry-After` (whole
 *    seconds, truncated), `ctx.state.rateLimit` = {@link KoaRatelimitState},
 *    status `status` (or 429), `onLimited(ctx)` (not awaited, as upstream;
 *    a rejection it returns is reported on `app.emit('error')` instead of
 *    becoming an unhandled rejection), then with `throw`
 *    `ctx.throw(status, body, { headers })`.
 *
 * A driver failure (Redis down, or no answer within `storeTimeoutMs`)
 * rejects with a `RateKitError` of code `ERR_RATEKIT_STORE`; Koa answers 500.
 */
export function compatRatelimit<StateT, ContextT>(options: Readonly<Record<string, unknown>>): KoaRatelimitMiddleware<StateT, ContextT> {
  type Ctx = ParameterizedContext<StateT, ContextT>;
  const params: CompatParams<Ctx> = resolveCompatOptions<Ctx>(options);
  const { driver, namespace, names } = params;

  async function ratelimit(ctx: Ctx, next: Next): Promise<void> {
    const id = params.id(ctx);
    const whitelisted = params.whitelist !== undefined && (await params.whitelist(ctx));
    const blacklisted = params.blacklist !== undefined && (await params.blacklist(ctx));
    if (blacklisted) ctx.throw(403, 'Forbidden');
    if (id === false || whitelisted) return next();
    if (!id) throw new TypeError(`ratelimit(): \`id(ctx)\` returned ${String(id) || '""'}: a key is required (return false to skip limiting)`);

    const limit = await driver.get(`${namespace}:${String(id)}`, id);
    let headers: Record<string, number> = {};
    if (!params.disableHeader) {
      headers = { [names.remaining]: limit.remaining > 0 ? limit.remaining - 1 : 0, [names.reset]: limit.reset, [names.total]: limit.total };
      ctx.set(headers as unknown as Record<string, string>);
    }
    if (limit.remaining) return next();

    const { deltaMs, after } = refusalTiming(limit.reset, Date.now());
    const message = params.errorMessage || defaultRefusalMessage(deltaMs);
    ctx.body = message;
    ctx.set('Retry-After', String(after));
    (ctx.state as { rateLimit?: KoaRatelimitState }).rateLimit = { after, headers, id, message };
    ctx.status = (params.status || 429) as number;
    if (params.onLimited !== undefined) {
      const done = params.onLimited(ctx);
      if (done instanceof Promise) done.catch((error: unknown) => ctx.app.emit('error', error, ctx));
    }
    if (params.throw) {
      headers['Retry-After'] = after;
      ctx.throw(ctx.status, ctx.body as string, { headers });
    }
  }

  return Object.defineProperty(ratelimit, 'resetKey', {
    value: async (id: string) => driver.reset(`${namespace}:${id}`),
    enumerable: true,
  }) as unknown as KoaRatelimitMiddleware<StateT, ContextT>;
}
