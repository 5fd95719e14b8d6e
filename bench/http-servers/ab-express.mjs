// A/B server of lib/http-ab.mjs for express: `bare`, `rlflex-<pass|reject>` (lib/http-rlflex.mjs), or
// `<new|old>-<compat|core>-<pass|reject>`: the built @ratekit/express (`new`) or the build at $BENCH_AB_OLD (`old`),
// in incumbent-compat mode (the incumbent's options only) or ratekit mode (plus `algorithm: 'fixed-window'`).
import express from 'express';
import { rateLimit as newRateLimit } from '@ratekit/express';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';
const oldRateLimit = process.env.BENCH_AB_OLD ? (await import(process.env.BENCH_AB_OLD)).rateLimit : undefined;

serveHttp((arg) => {
  const app = express();
  const [a, b, c] = arg.split('-');
  if (a === 'rlflex') {
    const { limiter, headers } = flexibleLimiter(limitOf(b));
    app.use((req, res, next) => {
      limiter
        .consume(req.ip)
        .then((r) => {
          res.set(headers(r, false));
          next();
        })
        .catch((r) => {
          if (r instanceof Error) return next(r);
          res.set(headers(r, true));
          res.status(429).send(TOO_MANY);
        });
    });
  } else if (a !== 'bare') {
    const limit = limitOf(c);
    app.use((a === 'old' ? oldRateLimit : newRateLimit)(b === 'core' ? { windowMs: WINDOW_MS, limit, algorithm: 'fixed-window' } : { windowMs: WINDOW_MS, limit }));
  }
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
