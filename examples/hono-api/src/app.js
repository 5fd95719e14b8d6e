// The example API: a read policy on GET /items and a stricter write policy on
// POST /items, both on one in-memory store, with draft-8 and legacy headers.
// The same app runs on Node, Bun, Deno and workerd: only the runtime's
// getConnInfo (where the client address comes from) differs, and each
// server file passes its own.
import { memoryStore } from '@ratekit/core';
import { rateLimit } from '@ratekit/hono';
import { Hono } from 'hono';

/** Reads: a token bucket holding 20 requests, refilled at 10 per second. */
export const READ_POLICY = Object.freeze({ algorithm: 'token-bucket', limit: 10, windowMs: 1_000, burst: 20, name: 'read' });

/** Writes: at most 5 per 10 seconds, counted over a sliding window. */
export const WRITE_POLICY = Object.freeze({ algorithm: 'sliding-window', limit: 5, windowMs: 10_000, name: 'write' });

/**
 * Builds the app.
 *
 * Headers: `RateLimit` / `RateLimit-Policy` in the IETF draft-8 form (one
 * named item per limit, the current wire format of drafts -08 to -11) plus
 * the legacy `X-RateLimit-*` fields that most clients still read.
 *
 * @param {{ getConnInfo: import('@ratekit/hono').GetConnInfo, store?: import('@ratekit/core').RateLimitStore, now?: () => number }} options
 *   `getConnInfo`: Hono's helper for the runtime (`hono/bun`, `hono/deno`,
 *   `hono/cloudflare-workers`, `@hono/node-server/conninfo`): the key is the client IP;
 *   `store`: shared by both limiters, kept apart by prefix (default: a new in-memory store);
 *   `now`: the clock, for tests.
 */
export function createApp({ getConnInfo, store = memoryStore(), now }) {
  const shared = { getConnInfo, store, now, standardHeaders: 'draft-8', legacyHeaders: true };
  const reads = rateLimit({ ...shared, prefix: 'read', limits: READ_POLICY });
  const writes = rateLimit({ ...shared, prefix: 'write', limits: WRITE_POLICY, message: { error: 'Too many writes, please slow down.' } });

  const items = [{ id: 1, name: 'first item' }];
  const app = new Hono();

  app.get('/items', reads, (c) => c.json(items));

  app.post('/items', writes, async (c) => {
    const body = await c.req.json().catch(() => ({}));
    const item = { id: items.length + 1, name: String(body?.name ?? `item ${items.length + 1}`) };
    items.push(item);
    return c.json(item, 201);
  });

  app.get('/health', (c) => c.json({ ok: true }));

  return app;
}
