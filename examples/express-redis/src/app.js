// The example API: GET /api/hello, limited per API key (or per client IP without one) by a
// budget that lives in Redis, so every process running this app shares it exactly.
import { ipKeyGenerator, rateLimit } from '@ratekit/express';
import { redisStore } from '@ratekit/redis';
import express from 'express';

/** 10 requests per rolling minute per API key: a sliding log, exact at any instant (no window edges). */
export const API_POLICY = Object.freeze({ algorithm: 'sliding-log', limit: 10, windowMs: 60_000, name: 'api' });

/**
 * The key of a request: its `X-Api-Key` header, else its IP address (IPv6 grouped by /56).
 * @param {import('express').Request} req
 */
export function apiKey(req) {
  return req.get('x-api-key') ?? ipKeyGenerator(req.ip ?? '');
}

/**
 * Builds the app.
 *
 * @param {{
 *   client: import('@ratekit/redis').RedisClientLike,
 *   prefix?: string,
 *   name?: string,
 *   storeTimeoutMs?: number,
 * }} options
 *   `client`: a connected node-redis (or ioredis) client, owned by the caller;
 *   `prefix`: the limiter's namespace in Redis (default `api`), to run several budgets side by side;
 *   `name`: this process's name, sent back in `X-Served-By` so the demo can show who answered;
 *   `storeTimeoutMs`: how long a request waits for Redis before it is let through (default 200 ms).
 */
export function createApp({ client, prefix = 'api', name = `pid ${process.pid}`, storeTimeoutMs = 200 }) {
  const limiter = rateLimit({
    store: redisStore({ client }),
    limits: API_POLICY,
    prefix,
    keyGenerator: apiKey,
    standardHeaders: 'draft-8',
    legacyHeaders: true,
    // Redis down or slow: let requests through after 200 ms (by default) at most, and log why.
    onStoreError: 'allow',
    storeTimeoutMs,
    message: { error: 'Too many requests: 10 per minute per API key, shared by every server.' },
  });

  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.set('X-Served-By', name);
    next();
  });

  app.get('/api/hello', limiter, (_req, res) => {
    res.json({ hello: 'world', servedBy: name });
  });

  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });

  return app;
}
