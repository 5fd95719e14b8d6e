import Koa from 'koa';

/** Test support: a Koa app (errors not logged) with `middleware` before an `ok` handler. */
export function appServing(middleware: Koa.Middleware): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(middleware);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return app;
}
