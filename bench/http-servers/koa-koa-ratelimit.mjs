// Koa 3 with koa-ratelimit 6: memory driver on `db: new Map()`, its defaults otherwise (key `ctx.ip`, X-RateLimit-* headers).
import Koa from 'koa';
import ratelimit from 'koa-ratelimit';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = new Koa();
  app.use(ratelimit({ driver: 'memory', db: new Map(), duration: WINDOW_MS, max: limitOf(scenario) }));
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
