// Koa 3, bare (`bare`), with one empty middleware (`noop`), or with the minimal limiter of
// lib/http-minimal.mjs (`minimal`).
import Koa from 'koa';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = new Koa();
  if (scenario === 'noop') app.use((_ctx, next) => next());
  else if (scenario === 'minimal') {
    const decide = minimalLimiter();
    app.use((ctx, next) => {
      for (const [name, value] of decide(ctx.ip)) ctx.set(name, value);
      return next();
    });
  } else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
