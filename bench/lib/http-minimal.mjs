// The "minimal limiter" row of the HTTP part: the least any rate-limit
// middleware that behaves like the adapters' defaults can do per request.
// It reads the client IP the framework's way, makes one in-memory decision
// with @ratekit/core (a fixed window of NEVER per WINDOW_MS, the built
// package), and sets the three legacy headers the adapters send by default.
// No options, no validation, no key grouping, no error handling: it is a
// floor to read the adapters against, not a limiter to use.

import { createLimiter, memoryStore } from '@ratekit/core';
import { NEVER, WINDOW_MS } from './http-server.mjs';

/**
 * `decide(ip)` → `{ allowed, headers }`: the three legacy headers as `[name, value]` pairs, and
 * Retry-After on a refusal. `limit` per window: NEVER (the pass floor) or 1 (the refusal floor).
 */
export function minimalLimiter(limit = NEVER) {
  const limiter = createLimiter({ limits: { limit, windowMs: WINDOW_MS }, store: memoryStore({ pruneIntervalMs: 0 }) });
  return (ip) => {
    const d = limiter.consume(ip);
    const headers = [
      ['X-RateLimit-Limit', String(d.limit)],
      ['X-RateLimit-Remaining', String(d.remaining)],
      ['X-RateLimit-Reset', String(Math.ceil((d.nowMs + d.resetMs) / 1000))],
    ];
    if (!d.allowed) headers.push(['Retry-After', String(Math.ceil(d.retryAfterMs / 1000))]);
    return { allowed: d.allowed, headers };
  };
}
