/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** True for a promise or any other thenable (user functions may return either). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Applies `fn` to a value now, or once its promise settles: the synchronous
 * in-memory path stays free of promises, an asynchronous store or user
 * function still works.
 */
export function then<T, U>(value: T | PromiseLike<T>, fn: (value: T) => U | PromiseLike<U>): MaybePromise<U> {
  return isThenable(value) ? Promise.resolve(value).then(fn) : (fn(value) as MaybePromise<U>);
}
