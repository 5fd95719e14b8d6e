// Hono 4, bare (`bare`), with one empty middleware (`noop`), or with the minimal limiter of
// lib/http-minimal.mjs (`minimal`, `minimal-reject`), keyed by the runtime's getConnInfo. Node or Bun (lib/http-hono.mjs).
import { Hono } from 'hono';
import { serveHono, connInfoHelper } from '../lib/http-hono.mjs';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, serveHttp } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const app = new Hono();
  if (scenario === 'noop') app.use((_c, next) => next());
  else if (scenario === 'minimal' || scenario === 'minimal-reject') {
    // The floor: core's limiter and the legacy headers; a refusal answered as plainly as Hono can.
    const getConnInfo = await connInfoHelper();
    const decide = minimalLimiter(scenario === 'minimal' ? undefined : 1);
    app.use((c, next) => {
      const { allowed, headers } = decide(getConnInfo(c).remote.address);
      for (const [name, value] of headers) c.header(name, value);
      if (allowed) return next();
      return c.text('Too many requests', 429);
    });
  } else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', (c) => c.text(HELLO));
  return serveHono(app);
});
