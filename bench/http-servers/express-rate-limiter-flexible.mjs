// Express 5 with rate-limiter-flexible's minimal middleware (its wiki's Express middleware:
// `consume(req.ip)`, then next() or 429), plus the README's headers (lib/http-rlflex.mjs).
import express from 'express';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, limitOf, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const { limiter, headers } = flexibleLimiter(limitOf(scenario));
  const app = express();
  app.use((req, res, next) => {
    limiter
      .consume(req.ip)
      .then((rlRes) => {
        res.set(headers(rlRes, false));
        next();
      })
      .catch((rlRes) => {
        if (rlRes instanceof Error) return next(rlRes);
        res.set(headers(rlRes, true));
        res.status(429).send(TOO_MANY);
      });
  });
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
