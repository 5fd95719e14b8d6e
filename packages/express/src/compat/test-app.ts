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

/**
 * Test support: `store` with every `decrement` it is asked for kept, so a test can wait for the
 * decrements that `skipFailedRequests` fires from a response's `'finish'` (unawaited, as
 * express-rate-limit does) instead of sleeping and hoping they have landed.
 * `decrements(n)` resolves once `n` decrements were asked for and all of them have settled.
 */
export function withDecrements<S extends object>(store: S): { store: S; decrements(count: number): Promise<void> } {
  const asked: Array<Promise<unknown>> = [];
  const tracked = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      if (name !== 'decrement') return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        const result = Promise.resolve((value as (...args: unknown[]) => unknown).apply(target, args));
        asked.push(result);
        return result;
      };
    },
  });
  return {
    store: tracked,
    async decrements(count) {
      const deadline = Date.now() + 10_000;
      while (asked.length < count) {
        if (Date.now() > deadline) throw new Error(`Only ${asked.length} of ${count} decrements were asked for within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(asked);
    },
  };
}
