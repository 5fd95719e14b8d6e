// Express 5 with @ratekit/express (the built package), as a user migrating from
// express-rate-limit writes it: the same options as express-rate-limit.mjs,
// so its defaults (client IP key, legacy X-RateLimit-* headers, 429 with the
// default message). Scenarios: `pass`/`reject` (express-rate-limit mode: only
// express-rate-limit options), `core-pass`/`core-reject` (ratekit mode: the
// same plus `algorithm: 'fixed-window'`, so the core limiter decides).
import express from 'express';
import { rateLimit } from '@ratekit/express';
import { HELLO, limitOf, listenNode, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const core = scenario.startsWith('core-');
  const limit = limitOf(core ? scenario.slice('core-'.length) : scenario);
  const app = express();
  app.use(rateLimit(core ? { windowMs: WINDOW_MS, limit, algorithm: 'fixed-window' } : { windowMs: WINDOW_MS, limit }));
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
