// The example API: a read policy on GET /items and a stricter write policy on
// POST /items, both on one in-memory store, with draft-8 and legacy headers.
import { bodyParser } from '@koa/bodyparser';
import { Router } from '@koa/router';
import { memoryStore } from '@ratekit/core';
import { ratelimit } from '@ratekit/koa';
import Koa from 'koa';

/** Reads: a token bucket holding 20 requests, refilled at 10 per second. */
export const READ_POLICY = Object.freeze({ algorithm: 'token-bucket', limit: 10, windowMs: 1_000, burst: 20, name: 'read' });

/** Writes: at most 5 per 10 seconds, counted over a sliding window. */
export const WRITE_POLICY = Object.freeze({ algorithm: 'sliding-window', limit: 5, windowMs: 10_000, name: 'write' });

/**
 * Builds the app.
 *
 * Each route carries its own middleware (Koa has no route metadata), so the
 * two policies keep their own counters: they share one store and are kept
 * apart by `namespace`. Keys are the client IP (`ctx.ip`); set `proxy` only
 * behind a reverse proxy you trust, so `X-Forwarded-For` is believed.
 *
 * Headers: `RateLimit` / `RateLimit-Policy` in the IETF draft-8 form (one
 * named item per limit, the wire format of drafts -08 to -11) plus the
 * legacy `X-RateLimit-*` fields that most clients still read.
 *
 * @param {{ store?: import('@ratekit/core').RateLimitStore, now?: () => number, proxy?: boolean }} [options]
 *   `store`: shared by both middlewares (default: a new in-memory store);
 *   `now`: the clock, for tests; `proxy`: Koa's `app.proxy` (default false).
 * @returns {Koa} the app; `app.callback()` for a server or supertest
 */
export function createApp({ store = memoryStore(), now, proxy = false } = {}) {
  const shared = { store, now, standardHeaders: 'draft-8', legacyHeaders: true };
  const reads = ratelimit({ ...shared, namespace: 'read', limits: READ_POLICY });
  const writes = ratelimit({ ...shared, namespace: 'write', limits: WRITE_POLICY, errorMessage: { error: 'Too many writes, please slow down.' } });

  const items = [{ id: 1, name: 'first item' }];
  const router = new Router();

  router.get('/items', reads, (ctx) => {
    ctx.body = items;
  });

  // The limiter runs before the body is parsed: a refused write costs no parsing.
  router.post('/items', writes, bodyParser(), (ctx) => {
    const item = { id: items.length + 1, name: String(ctx.request.body?.name ?? `item ${items.length + 1}`) };
    items.push(item);
    ctx.status = 201;
    ctx.body = item;
  });

  router.get('/health', (ctx) => {
    ctx.body = { ok: true };
  });

  const app = new Koa({ proxy });
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
