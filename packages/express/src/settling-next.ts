import type { NextFunction } from 'express';

/**
 * The promise both modes' middleware returns, as express-rate-limit's does: `done` settles once
 * `proceed` (a `next` that settles first) has passed the request on, or once `settle()` is called
 * for a request answered by the handler. It never rejects.
 */
export function settlingNext(next: NextFunction): { done: Promise<void>; settle: () => void; proceed: NextFunction } {
  let settle!: () => void;
  const done = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const proceed = ((...args: [unknown?]) => {
    settle();
    next(...(args as []));
  }) as NextFunction;
  return { done, settle, proceed };
}
