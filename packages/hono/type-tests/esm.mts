// An ESM app: ratekit mode with a runtime's getConnInfo, the hono-rate-limiter drop-in with its stores, the compat subpath.
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import { Redis } from '@upstash/redis';
import { memoryStore, type RateLimitStore } from '@ratekit/core';
import { type Decision, ipKeyGenerator, MemoryStore, rateLimit, type RateLimitOptions, rateLimiter, RedisStore, type Store, webSocketLimiter } from '@ratekit/hono';
import { rateLimiter as compatRateLimiter, setDraft6Headers } from '@ratekit/hono/compat';

const app = new Hono();
const store: RateLimitStore = memoryStore();
const limited = rateLimit({ getConnInfo, algorithm: 'gcra', limit: 10, windowMs: 1_000, standardHeaders: 'draft-8', store, trustProxy: 1, ipv6Subnet: 64 });
app.use(limited);
const decision: Decision | Promise<Decision> = limited.limiter.peek('key');
app.use(
  rateLimit({
    keyGenerator: (c) => c.req.header('x-user') ?? false,
    limits: [
      { limit: 5, windowMs: 1_000 },
      { limit: 100, windowMs: 60_000 },
    ],
    handler: (c, d) => c.text(`retry in ${d.retryAfterMs}`, 429),
  }),
);
const options: RateLimitOptions = { keyGenerator: (c) => ipKeyGenerator(c.req.header('cf-connecting-ip') ?? '') };
app.use(rateLimit(options));

// The drop-in: hono-rate-limiter's options, its stores and a store of its contract.
const custom: Store = { increment: () => ({ totalHits: 1 }), decrement: () => undefined, resetKey: () => undefined };
app.use(rateLimiter({ keyGenerator: (c) => c.req.header('x-api-key') ?? '', limit: (c) => (c.req.method === 'GET' ? 100 : 10), store: new MemoryStore() }));
app.use(rateLimiter({ keyGenerator: () => 'k', store: new RedisStore({ client: new Redis({ url: 'http://localhost', token: 't' }) }) }));
app.use(compatRateLimiter({ keyGenerator: () => 'k', store: custom, standardHeaders: 'draft-7', storeTimeoutMs: 500 }));
const limitMessages = webSocketLimiter({ keyGenerator: () => 'k', limit: 10 });
void limitMessages;
void setDraft6Headers;
void decision;

// @ts-expect-error hono-rate-limiter requires a keyGenerator
rateLimiter({ limit: 5 });
// @ts-expect-error not an algorithm
rateLimit({ getConnInfo, algorithm: 'leaky-faucet' });
// @ts-expect-error draft-5 is not a draft ratekit sends
rateLimit({ getConnInfo, standardHeaders: 'draft-5' });
