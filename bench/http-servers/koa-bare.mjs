// Koa 3, bare (`bare`), with one empty middleware (`noop`), or with the minimal limiter of
// lib/http-minimal.mjs (`minimal`).
import Koa from 'koa';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = new Koa();
  if (scenario === 'noop') app.use((_ctx, next) => next());
  else if (scenario === 'minimal' || scenario === 'minimal-reject') {
    // The floor: core's limiter and the legacy headers; a refusal answered as plainly as Koa can.
    const decide = minimalLimiter(scenario === 'minimal' ? undefined : 1);
    app.use((ctx, next) => {
      const { allowed, headers } = decide(ctx.ip);
      for (const [name, value] of headers) ctx.set(name, value);
      if (allowed) return next();
      ctx.status = 429;
      ctx.body = 'Too many requests';
    });
  } else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
