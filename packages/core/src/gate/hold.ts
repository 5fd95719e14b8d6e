/**
 * The gate's delay hold: a pass the `delay` algorithm admits late waits its
 * `delayMs` before the app runs, unless the request is aborted first. An
 * aborted request stops waiting at once: the client left, and holding it
 * longer serves no one. The timer and the listener are removed either way,
 * so nothing outlives the hold. Every adapter holds through this one function.
 *
 * @module
 */

/**
 * Resolves after `delayMs` ms, or as soon as `signal` aborts (at once if it
 * already has). Never rejects.
 *
 * @param delayMs - how long to hold, in ms (`<= 0` resolves on the next turn)
 * @param signal - the request's AbortSignal, when the framework gives one
 * @example await holdFor(decision.delayMs, request.signal);
 */
export function holdFor(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, delayMs));
    signal?.addEventListener('abort', done);
  });
}
