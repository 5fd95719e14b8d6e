// Koa 3 with @ratekit/koa (the built package), with the same options as
// koa-koa-ratelimit.mjs, as a user migrating from koa-ratelimit keeps them:
// memory driver, `db: new Map()`, client IP key (`ctx.ip`), legacy
// X-RateLimit-* headers (the default), 429 with the default message.
import Koa from 'koa';
import { ratelimit } from '@ratekit/koa';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = new Koa();
  app.use(ratelimit({ driver: 'memory', db: new Map(), duration: WINDOW_MS, max: limitOf(scenario) }));
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
