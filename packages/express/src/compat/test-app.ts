import express, { type Express, type Request, type RequestHandler, type Response } from 'express';

/**
 * Test support: an app with `limiter` on every route, `/info` answering
 * `req.rateLimit` as JSON, `/fail` a 500, and `ok` for anything else.
 */
export function appServing(limiter: RequestHandler): Express {
  const app = express();
  app.use(limiter);
  app.get('/info', (req: Request, res: Response) => {
    res.json((req as Request & { rateLimit?: unknown }).rateLimit);
  });
  app.get('/fail', (_req, res) => {
    res.status(500).send('failed');
  });
  app.use((_req: Request, res: Response) => {
    res.send('ok');
  });
  return app;
}
