/**
 * Synchronous-when-possible sequencing. User functions and stores may answer
 * with a value or a promise; with the in-memory stores and plain functions the
 * request path then creates no promise at all.
 *
 * @module
 */

/** True for a promise or any other thenable (user functions may return either). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Calls `then` with `value` now, or once its promise resolves. A rejection,
 * or a throw from `then` after an asynchronous step, goes to `fail`; a
 * synchronous throw from `then` propagates to the caller (who wraps the whole
 * request in one try/catch).
 */
export function after<T>(value: T | PromiseLike<T>, then: (value: T) => void, fail: (error: unknown) => void): void {
  if (!isThenable(value)) {
    then(value);
    return;
  }
  value.then((resolved) => {
    try {
      then(resolved);
    } catch (error) {
      fail(error);
    }
  }, fail);
}

/** Calls `fn(...args)`, turning a synchronous throw into a rejected promise, so one handler sees every failure. */
export function attempt<T>(fn: () => T | PromiseLike<T>): T | PromiseLike<T> {
  try {
    return fn();
  } catch (error) {
    return Promise.reject(error);
  }
}
