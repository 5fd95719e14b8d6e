// Koa 3, bare (`bare`) or with one empty middleware (`noop`).
import Koa from 'koa';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = new Koa();
  if (scenario === 'noop') app.use((_ctx, next) => next());
  else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
