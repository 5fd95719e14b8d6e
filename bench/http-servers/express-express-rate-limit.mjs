// Express 5 with express-rate-limit 8 and its defaults (MemoryStore, client IP key, legacy X-RateLimit-* headers).
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = express();
  app.use(rateLimit({ windowMs: WINDOW_MS, limit: limitOf(scenario) }));
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
