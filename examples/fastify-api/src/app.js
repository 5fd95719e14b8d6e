// The example API: a read policy on every route by default (GET /items), a
// stricter write policy on POST /items, both on one in-memory store, with
// draft-8 and legacy headers: the same policies and headers as
// examples/express-api, so the two answer with the same header bytes.
import { memoryStore } from '@ratekit/core';
import fastifyRateLimit from '@ratekit/fastify';
import Fastify from 'fastify';

/** Reads: a token bucket holding 20 requests, refilled at 10 per second. */
export const READ_POLICY = Object.freeze({ algorithm: 'token-bucket', limit: 10, windowMs: 1_000, burst: 20, name: 'read' });

/** Writes: at most 5 per 10 seconds, counted over a sliding window. */
export const WRITE_POLICY = Object.freeze({ algorithm: 'sliding-window', limit: 5, windowMs: 10_000, name: 'write' });

/**
 * Builds the app (not listening). Async: the plugin must finish loading
 * before routes are declared, or they would not be limited.
 *
 * Headers: `RateLimit` / `RateLimit-Policy` in the IETF draft-8 form (one
 * named item per limit, the current wire format of drafts -08 to -11) plus
 * the legacy `X-RateLimit-*` fields that most clients still read.
 *
 * @param {{ store?: import('@ratekit/core').RateLimitStore, now?: () => number, logger?: boolean }} [options]
 *   `store`: shared by both policies, kept apart by namespace (default: a new in-memory store);
 *   `now`: the clock, for tests; `logger`: Fastify's logger (default off).
 * @returns {Promise<import('fastify').FastifyInstance>}
 */
export async function buildApp({ store = memoryStore(), now, logger = false } = {}) {
  const app = Fastify({ logger });

  // The plugin's own policy applies to every route without config.rateLimit: here, the read policy.
  await app.register(fastifyRateLimit, { store, now, limits: READ_POLICY, standardHeaders: 'draft-8', legacyHeaders: true });

  const items = [{ id: 1, name: 'first item' }];

  app.get('/items', async () => items);

  app.post(
    '/items',
    {
      config: {
        rateLimit: {
          limits: WRITE_POLICY,
          errorResponseBuilder: () => ({ statusCode: 429, error: 'Too many writes, please slow down.' }),
        },
      },
    },
    async (request, reply) => {
      const body = /** @type {{ name?: unknown } | undefined} */ (request.body);
      const item = { id: items.length + 1, name: String(body?.name ?? `item ${items.length + 1}`) };
      items.push(item);
      return reply.code(201).send(item);
    },
  );

  app.get('/health', { config: { rateLimit: false } }, async () => ({ ok: true }));

  return app;
}
