import type { Request, Response } from 'express';
import { attempt, isThenable } from '../maybe.js';
import type { ValueDeterminingMiddleware } from '../types.js';

/** How a response ended, watched from the start of the request. */
export interface ResponseWatch {
  readonly finished: Promise<void> | undefined;
  readonly closed: Promise<void> | undefined;
  readonly errored: Promise<void> | undefined;
}

/** What `skipFailedRequests` / `skipSuccessfulRequests` need. */
export interface SkipRequestsSettings {
  readonly skipFailedRequests: boolean;
  readonly skipSuccessfulRequests: boolean;
  readonly requestWasSuccessful: ValueDeterminingMiddleware<boolean>;
}

/** How to take a request back, and where its failures go. */
export interface Uncount {
  /** Takes the request's hit (or cost) back. */
  undo(): unknown;
  /** Reports a failure of `undo` (`'decrement'`), of `requestWasSuccessful` (`'callback'`), or while handling `close`/`error`. */
  report(error: unknown, during: 'decrement' | 'callback' | 'close' | 'error'): void;
}

/**
 * Starts watching the response's `finish`, `close` and `error` events, as
 * express-rate-limit does when a skip option is on, before anything else
 * happens to the request: a client that disconnects while the store is
 * still counting is seen too. `undefined` when no skip option is on.
 */
export function watchResponse(res: Response, settings: SkipRequestsSettings): ResponseWatch | undefined {
  const { skipFailedRequests, skipSuccessfulRequests } = settings;
  if (!skipFailedRequests && !skipSuccessfulRequests) return undefined;
  const once = (event: string) => new Promise<void>((resolve) => res.once(event, () => resolve()));
  return {
    finished: once('finish'),
    closed: skipFailedRequests ? once('close') : undefined,
    errored: skipFailedRequests ? once('error') : undefined,
  };
}

/**
 * Takes a counted request back, at most once, when its response turns out
 * to be one to skip: with `skipFailedRequests`, when it finished
 * unsuccessfully (per `requestWasSuccessful`, default status < 400), emitted
 * `error`, or closed before it ended; with `skipSuccessfulRequests`, when it
 * finished successfully. express-rate-limit's rules, refused requests
 * included (their response is a failure). Failures are reported, never
 * thrown: the response has gone.
 */
export function uncountWhenSkipped(req: Request, res: Response, watch: ResponseWatch, settings: SkipRequestsSettings, uncount: Uncount): void {
  let done = false;
  const undoOnce = () => {
    if (done) return;
    done = true;
    let result: unknown;
    try {
      result = uncount.undo();
    } catch (error) {
      uncount.report(error, 'decrement');
      return;
    }
    if (isThenable(result)) Promise.resolve(result).catch((error: unknown) => uncount.report(error, 'decrement'));
  };
  watch.finished?.then(() =>
    Promise.resolve(attempt(() => settings.requestWasSuccessful(req, res))).then(
      (successful) => {
        if (successful ? settings.skipSuccessfulRequests : settings.skipFailedRequests) undoOnce();
      },
      (error: unknown) => uncount.report(error, 'callback'),
    ),
  );
  watch.closed?.then(() => {
    if (!res.writableEnded) undoOnce();
  });
  watch.errored?.then(undoOnce);
}
