/**
 * `skipFailedRequests` and `skipSuccessfulRequests`, for both modes: watch
 * the response from the start of the request, then take the request's hit
 * (express-rate-limit mode) or cost (ratekit mode) back, at most once, when
 * the response turns out to be one to skip. The rules are express-rate-limit's.
 *
 * @module
 */
import type { Request, Response } from 'express';
import { attempt, isThenable } from './maybe.js';
import type { ValueDeterminingMiddleware } from './types.js';

/** How a response ended, watched from the start of the request. */
export interface ResponseWatch {
  readonly finished: Promise<void> | undefined;
  readonly closed: Promise<void> | undefined;
  readonly errored: Promise<void> | undefined;
  /**
   * Resolves once the un-counting started by the events that have already
   * fired is done (at once when none has): what the middleware's promise
   * waits for, so code that awaits it sees the decrement.
   */
  settled(): Promise<void>;
  /** Records the work an event starts (for {@link ResponseWatch.settled}). */
  track(event: 'finish' | 'close' | 'error', work: Promise<unknown>): void;
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
  const fired = new Set<string>();
  const work = new Map<string, Promise<unknown>[]>();
  const once = (event: string) =>
    new Promise<void>((resolve) =>
      res.once(event, () => {
        fired.add(event);
        resolve();
      }),
    );
  return {
    finished: once('finish'),
    closed: skipFailedRequests ? once('close') : undefined,
    errored: skipFailedRequests ? once('error') : undefined,
    settled: () => Promise.all([...fired].flatMap((event) => work.get(event) ?? [])).then(() => undefined),
    track(event, promise) {
      work.set(event, [...(work.get(event) ?? []), promise]);
    },
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
  const undoOnce = (): Promise<void> | undefined => {
    if (done) return undefined;
    done = true;
    let result: unknown;
    try {
      result = uncount.undo();
    } catch (error) {
      uncount.report(error, 'decrement');
      return undefined;
    }
    if (isThenable(result))
      return Promise.resolve(result).then(
        () => undefined,
        (error: unknown) => uncount.report(error, 'decrement'),
      );
    return undefined;
  };
  // As express-rate-limit: each skip option asks `requestWasSuccessful` on its own.
  const whenFinished = (undoIf: (successful: unknown) => boolean) =>
    watch.finished?.then(() =>
      Promise.resolve(attempt(() => settings.requestWasSuccessful(req, res))).then(
        (successful) => (undoIf(successful) ? undoOnce() : undefined),
        (error: unknown) => uncount.report(error, 'callback'),
      ),
    );
  const finishWork = [
    settings.skipFailedRequests ? whenFinished((successful) => !successful) : undefined,
    settings.skipSuccessfulRequests ? whenFinished((successful) => Boolean(successful)) : undefined,
  ];
  for (const work of finishWork) if (work !== undefined) watch.track('finish', work);
  const closeWork = watch.closed?.then(() => (res.writableEnded ? undefined : undoOnce()));
  if (closeWork !== undefined) watch.track('close', closeWork);
  const errorWork = watch.errored?.then(undoOnce);
  if (errorWork !== undefined) watch.track('error', errorWork);
}
