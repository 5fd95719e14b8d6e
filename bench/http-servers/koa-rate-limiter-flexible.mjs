// Koa 3 with rate-limiter-flexible's minimal middleware (its wiki's Koa middleware:
// `await consume(ctx.ip)`, 429 on rejection, else `await next()`), plus the README's headers (lib/http-rlflex.mjs).
import Koa from 'koa';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, limitOf, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const { limiter, headers } = flexibleLimiter(limitOf(scenario));
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      ctx.set(headers(await limiter.consume(ctx.ip), false));
    } catch (rlRes) {
      if (rlRes instanceof Error) throw rlRes;
      ctx.set(headers(rlRes, true));
      ctx.status = 429;
      ctx.body = TOO_MANY;
      return;
    }
    await next();
  });
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
