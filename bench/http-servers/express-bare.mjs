// Express 5, bare (`bare`) or with one empty middleware (`noop`): the floor any adapter pays for being a layer.
import express from 'express';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp((scenario) => {
  const app = express();
  if (scenario === 'noop') app.use((_req, _res, next) => next());
  else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  return listenNode(app);
});
