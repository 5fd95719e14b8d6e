// The example API: a read policy on GET /items and a stricter write policy on
// POST /items, both on one in-memory store, with draft-8 and legacy headers.
import { memoryStore } from '@ratekit/core';
import { rateLimit } from '@ratekit/express';
import express from 'express';

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
 * @param {{ store?: import('@ratekit/core').RateLimitStore, now?: () => number }} [options]
 *   `store`: shared by both limiters, kept apart by prefix (default: a new in-memory store);
 *   `now`: the clock, for tests.
 */
export function createApp({ store = memoryStore(), now } = {}) {
  const shared = { store, now, standardHeaders: 'draft-8', legacyHeaders: true };
  const reads = rateLimit({ ...shared, prefix: 'read', limits: READ_POLICY });
  const writes = rateLimit({ ...shared, prefix: 'write', limits: WRITE_POLICY, message: { error: 'Too many writes, please slow down.' } });

  const items = [{ id: 1, name: 'first item' }];
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json());

  app.get('/items', reads, (_req, res) => {
    res.json(items);
  });

  app.post('/items', writes, (req, res) => {
    const item = { id: items.length + 1, name: String(req.body?.name ?? `item ${items.length + 1}`) };
    items.push(item);
    res.status(201).json(item);
  });

  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });

  return app;
}
