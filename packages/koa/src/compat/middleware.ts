import type { Middleware, Next, ParameterizedContext } from 'koa';
import type { DriverAnswer } from './drivers.js';
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
  const { driver, namespace, names, whitelist, blacklist, disableHeader } = params;
  const prefix = `${namespace}:`;
  const listed = whitelist !== undefined || blacklist !== undefined;
  // The three headers can be set one by one, as `ctx.set(object)` sets them, when the object would
  // hold them in that order: three distinct, non-empty names that are not array indices.
  const byField = new Set([names.remaining, names.reset, names.total]).size === 3 && [names.remaining, names.reset, names.total].every((n) => n !== '' && !/^(0|[1-9]\d*)$/.test(n));
  // `X-RateLimit-Limit` as Koa 2 sets it (a string), cached while `total` stays the same.
  let totalOf = Number.NaN;
  let totalText = '';
  // The last `response.set` seen and what {@link stringifies} said of it (one app: always the same).
  let lastSet: unknown;
  let lastStringify: boolean | undefined;

  /** Whether `set` is a Koa `response.set` this middleware knows (Koa 2's or 3's), so it can do `set`'s work itself. */
  function setsDirectly(set: unknown): boolean {
    if (set !== lastSet) {
      lastStringify = stringifies(set);
      lastSet = set;
    }
    return lastStringify !== undefined;
  }

  /**
   * What `ctx.set(headers)` does, without its per-call arrays (Koa 3) or
   * recursion (Koa 2): each field to `res.setHeader`, the value as a string
   * on Koa 2 and as given on Koa 3, nothing once the headers are sent.
   */
  function writeHeaders(ctx: Ctx, remaining: number, reset: number, total: number): void {
    const response = ctx.response;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared by identity with Koa's own `set`, never called unbound
    setsDirectly(response.set);
    const stringify = lastStringify;
    if (stringify === undefined || !byField) {
      ctx.set({ [names.remaining]: remaining, [names.reset]: reset, [names.total]: total } as unknown as Record<string, string>);
      return;
    }
    if (response.headerSent) return;
    const res = ctx.res;
    if (stringify) {
      if (total !== totalOf) {
        totalOf = total;
        totalText = String(total);
      }
      res.setHeader(names.remaining, String(remaining));
      res.setHeader(names.reset, String(reset));
      res.setHeader(names.total, totalText);
    } else {
      res.setHeader(names.remaining, remaining);
      res.setHeader(names.reset, reset);
      res.setHeader(names.total, total);
    }
  }

  /** After the lists: count the request and answer (synchronously with the memory driver). */
  function limit(ctx: Ctx, next: Next, id: unknown): Promise<void> {
    if (id === false) return next();
    if (!id) throw new TypeError(`ratelimit(): \`id(ctx)\` returned ${String(id) || '""'}: a key is required (return false to skip limiting)`);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as the incumbent: it concatenates whatever value it is given
    const answer = driver.get(prefix + String(id), id);
    if (answer instanceof Promise) return answer.then((a) => respond(ctx, next, id, a));
    return respond(ctx, next, id, answer);
  }

  function respond(ctx: Ctx, next: Next, id: unknown, limit: DriverAnswer): Promise<void> {
    const remaining = limit.remaining > 0 ? limit.remaining - 1 : 0;
    if (!disableHeader) writeHeaders(ctx, remaining, limit.reset, limit.total);
    if (limit.remaining) return next();
    return refuse(ctx, id, limit, disableHeader ? {} : { [names.remaining]: remaining, [names.reset]: limit.reset, [names.total]: limit.total });
  }

  function refuse(ctx: Ctx, id: unknown, limit: DriverAnswer, headers: Record<string, number>): Promise<void> {
    const { deltaMs, after } = refusalTiming(limit.reset, Date.now());
    const message = params.errorMessage || defaultRefusalMessage(deltaMs);
    ctx.body = message;
    // `ctx.set('Retry-After', String(after))`, without Koa 3's per-call arrays when `set` is Koa's own.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared by identity with Koa's own `set`, never called unbound
    if (setsDirectly(ctx.response.set)) {
      if (!ctx.response.headerSent) ctx.res.setHeader('Retry-After', String(after));
    } else {
      ctx.set('Retry-After', String(after));
    }
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
    return DONE;
  }

  /** `whitelist` and `blacklist`, awaited as upstream awaits them, then {@link limit}. */
  async function lists(ctx: Ctx, next: Next, id: unknown): Promise<void> {
    const whitelisted = whitelist !== undefined && (await whitelist(ctx));
    const blacklisted = blacklist !== undefined && (await blacklist(ctx));
    if (blacklisted) ctx.throw(403, 'Forbidden');
    if (id === false || whitelisted) {
      await next();
      return;
    }
    return limit(ctx, next, id);
  }

  // Plain functions returning promises, not one `async` function: with the memory driver and no
  // lists nothing is awaited, and the promise returned is `next()`'s own.
  function ratelimit(ctx: Ctx, next: Next): Promise<void> {
    try {
      const id = params.id(ctx);
      return listed ? lists(ctx, next, id) : limit(ctx, next, id);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  return Object.defineProperty(ratelimit, 'resetKey', {
    value: async (id: string) => driver.reset(prefix + id),
    enumerable: true,
  }) as unknown as KoaRatelimitMiddleware<StateT, ContextT>;
}

/** What a refusal returns: nothing is left to wait for. */
const DONE: Promise<void> = Promise.resolve();

/** Per Koa `response.set`: whether it turns a value into a string (Koa 2) or sets it as given (Koa 3); `undefined` when unknown. */
const stringifyBySet = new WeakMap<object, boolean | undefined>();

/**
 * Whether this Koa's `response.set(name, value)` stringifies values, found
 * once per `set` function by calling it on a stand-in response that records
 * what it would set. `undefined` (so `ctx.set` is called as before) when it
 * does anything else, e.g. a patched `set`.
 */
function stringifies(set: unknown): boolean | undefined {
  if (typeof set !== 'function') return undefined;
  if (stringifyBySet.has(set)) return stringifyBySet.get(set);
  let answer: boolean | undefined;
  try {
    const seen: unknown[] = [];
    set.call({ headerSent: false, res: { setHeader: (name: unknown, value: unknown) => seen.push(name, value) } }, 'x-probe', 1);
    if (seen.length === 2 && seen[0] === 'x-probe') answer = seen[1] === '1' ? true : seen[1] === 1 ? false : undefined;
  } catch {
    answer = undefined;
  }
  stringifyBySet.set(set, answer);
  return answer;
}
