// Hono 4 with hono-rate-limiter 0.5.4 as its README shows it: keyGenerator (required, no IP helper)
// reading the client IP from the runtime's getConnInfo, its MemoryStore, the default draft-6 headers,
// 429 with the default message. Node or Bun (lib/http-hono.mjs).
import { Hono } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { connInfoHelper, serveHono } from '../lib/http-hono.mjs';
import { HELLO, limitOf, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const getConnInfo = await connInfoHelper();
  const app = new Hono();
  app.use(rateLimiter({ windowMs: WINDOW_MS, limit: limitOf(scenario), keyGenerator: (c) => getConnInfo(c).remote.address ?? '' }));
  app.get('/', (c) => c.text(HELLO));
  return serveHono(app);
});
