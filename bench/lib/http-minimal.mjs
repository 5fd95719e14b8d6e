// The "minimal limiter" row of the HTTP part: the least any rate-limit
// middleware that behaves like the adapters' defaults can do per request.
// It reads the client IP the framework's way, makes one in-memory decision
// with @ratekit/core (a fixed window of NEVER per WINDOW_MS, the built
// package), and sets the three legacy headers the adapters send by default.
// No options, no validation, no key grouping, no error handling: it is a
// floor to read the adapters against, not a limiter to use.

import { createLimiter, memoryStore } from '@ratekit/core';
import { NEVER, WINDOW_MS } from './http-server.mjs';

/** `decide(ip)` → the three legacy headers as `[name, value]` pairs. */
export function minimalLimiter() {
  const limiter = createLimiter({ limits: { limit: NEVER, windowMs: WINDOW_MS }, store: memoryStore({ pruneIntervalMs: 0 }) });
  return (ip) => {
    const d = limiter.consume(ip);
    return [
      ['X-RateLimit-Limit', String(d.limit)],
      ['X-RateLimit-Remaining', String(d.remaining)],
      ['X-RateLimit-Reset', String(Math.ceil((d.nowMs + d.resetMs) / 1000))],
    ];
  };
}
