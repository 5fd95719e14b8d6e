/**
 * RateLimiterQueueError: what a {@link RateLimiterQueue} rejects with when it
 * will not wait for tokens (more tokens asked than the limiter's `points`, a
 * full queue, a request past its deadline), as rlf's
 * `lib/component/RateLimiterQueueError.js`. Its `name` is `'CustomError'`, as
 * in rlf, so code that logs or branches on the name sees the same value; tell
 * it apart with `instanceof RateLimiterQueueError`.
 *
 * @module
 */

/**
 * The error a {@link RateLimiterQueue} rejects with instead of waiting.
 *
 * - `name`: `'CustomError'` (rlf's value);
 * - `message`: what went wrong, in rlf's words;
 * - `extra`: the constructor's second argument, set only when it is truthy (rlf).
 *
 * @example
 * ```ts
 * try {
 *   await queue.removeTokens(1);
 * } catch (err) {
 *   if (err instanceof RateLimiterQueueError) console.warn(err.message); // "Number of requests reached it's maximum 100"
 * }
 * ```
 */
export class RateLimiterQueueError extends Error {
  declare extra: string;

  constructor(message?: string, extra?: string) {
    super();
    // Own, enumerable fields, as rlf assigns them after `super()`: JSON.stringify(err) shows name, message and extra.
    this.name = 'CustomError';
    this.message = message as string;
    if (extra) this.extra = extra;
  }
}
