// Express 5, bare (`bare`), with one empty middleware (`noop`: the floor any adapter pays for being a layer),
// or with the minimal limiter of lib/http-minimal.mjs (`minimal`: the floor of a limiter with the default headers).
import express from 'express';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = express();
  if (scenario === 'noop') app.use((_req, _res, next) => next());
  else if (scenario === 'minimal' || scenario === 'minimal-reject') {
    // The floor: core's limiter and the legacy headers; a refusal answered as plainly as Express can.
    const decide = minimalLimiter(scenario === 'minimal' ? undefined : 1);
    app.use((req, res, next) => {
      const { allowed, headers } = decide(req.ip);
      for (const [name, value] of headers) res.setHeader(name, value);
      if (allowed) next();
      else res.status(429).send('Too many requests');
    });
  } else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
