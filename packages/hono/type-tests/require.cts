// A CommonJS app: `require` of the package and of its compat subpath.
import hono = require('@ratekit/hono');
import compat = require('@ratekit/hono/compat');
import { Hono } from 'hono';

const app = new Hono();
app.use(hono.rateLimit({ keyGenerator: (c) => c.req.path, limit: 3 }));
app.use(compat.rateLimiter({ keyGenerator: () => 'k', store: new compat.MemoryStore() }));
const info: hono.RateLimitInfo | undefined = undefined;
void info;

// @ts-expect-error `limit` is a number in ratekit mode (use `limits` for a function of the context)
hono.rateLimit({ keyGenerator: () => 'k', limit: () => 3 });
