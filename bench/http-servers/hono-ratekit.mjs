// Hono 4 with @ratekit/hono (the built package). `pass`/`reject`: its hono-rate-limiter drop-in,
// `rateLimiter`, with the same options as hono-hono-rate-limiter.mjs (what a user switching keeps).
// `core-pass`/`core-reject`: ratekit mode, `rateLimit({ getConnInfo })`: the same fixed window on
// @ratekit/core, keyed by the client IP (IPv6 grouped), the same draft-6 headers. Node or Bun.
import { rateLimit, rateLimiter } from '@ratekit/hono';
import { Hono } from 'hono';
import { connInfoHelper, serveHono } from '../lib/http-hono.mjs';
import { HELLO, limitOf, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const getConnInfo = await connInfoHelper();
  const app = new Hono();
  if (scenario.startsWith('core-')) app.use(rateLimit({ getConnInfo, windowMs: WINDOW_MS, limit: limitOf(scenario.slice('core-'.length)) }));
  else app.use(rateLimiter({ windowMs: WINDOW_MS, limit: limitOf(scenario), keyGenerator: (c) => getConnInfo(c).remote.address ?? '' }));
  app.get('/', (c) => c.text(HELLO));
  return serveHono(app);
});
