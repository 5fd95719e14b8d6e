// A/B server of lib/http-ab.mjs for koa: `bare`, `rlflex-<pass|reject>` (lib/http-rlflex.mjs), or
// `<new|old>-<compat|core>-<pass|reject>`: the built @ratekit/koa (`new`) or the build at $BENCH_AB_OLD (`old`),
// in incumbent-compat mode (the incumbent's options only) or ratekit mode (plus `algorithm: 'fixed-window'`).
import Koa from 'koa';
import * as newKoa from '@ratekit/koa';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';
// arg: bare | rlflex-<pass|reject> | <old|new>-<compat|core>-<pass|reject>
const oldKoa = process.env.BENCH_AB_OLD ? await import(process.env.BENCH_AB_OLD) : undefined;

serveHttp((arg) => {
  const app = new Koa();
  const [a, b, c] = arg.split('-');
  if (a === 'rlflex') {
    const { limiter, headers } = flexibleLimiter(limitOf(b));
    app.use(async (ctx, next) => {
      try {
        ctx.set(headers(await limiter.consume(ctx.ip), false));
      } catch (r) {
        if (r instanceof Error) throw r;
        ctx.set(headers(r, true));
        ctx.status = 429;
        ctx.body = TOO_MANY;
        return;
      }
      await next();
    });
  } else if (a !== 'bare') {
    const m = a === 'old' ? oldKoa : newKoa;
    const opts = { driver: 'memory', db: new Map(), duration: WINDOW_MS, max: limitOf(c) };
    if (b === 'core') opts.algorithm = 'fixed-window';
    app.use(m.ratelimit(opts));
  }
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  return listenNode(app.callback());
});
