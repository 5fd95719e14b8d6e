import type { NextFunction, Request, Response } from 'express';
import { isThenable } from '../maybe.js';
import type { Options } from '../types.js';

/**
 * The default refusal, as express-rate-limit's: status `statusCode`, then
 * `message` sent with `res.send` (a string as text/html, an object as JSON,
 * a Buffer as bytes) unless the response has already ended. A `message`
 * function is called with `(req, res)`; its result may be a promise.
 */
export function defaultHandler(req: Request, res: Response, _next: NextFunction, options: Options): void | Promise<void> {
  res.status(options.statusCode);
  const message = typeof options.message === 'function' ? (options.message as (req: Request, res: Response) => unknown)(req, res) : options.message;
  if (isThenable(message)) return Promise.resolve(message).then((body) => send(res, body));
  send(res, message);
}

function send(res: Response, body: unknown): void {
  if (!res.writableEnded) res.send(body);
}
