import { RateKitError, RateKitOptionError } from './errors.js';
import { assertPositive } from './validate.js';

/** The default `storeTimeoutMs`: a store call that has not answered in 1 s fails. */
export const DEFAULT_STORE_TIMEOUT_MS = 1_000;

/**
 * The longest delay, in ms, that timers hold (2³¹ − 1): Node, Bun, Deno and browsers turn a longer
 * `setTimeout` into 1 ms. A timeout option larger than this would fire at once, so the options that
 * set a timer (`storeTimeoutMs`, and @ratekit/upstash's `timeout`) reject it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Checks a `storeTimeoutMs` option: milliseconds from just above 0 to
 * 2³¹ − 1 (what Node's timers hold), or `Infinity` for no timeout;
 * `undefined` gives {@link DEFAULT_STORE_TIMEOUT_MS}. The adapters' drop-in
 * modes use it for the option they add to the incumbents' (a store call that
 * never answers must not hang a request).
 *
 * @returns the timeout in ms
 * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`, option `storeTimeoutMs`) for any other value:
 * a larger one would overflow `setTimeout` to 1 ms and fail every store call
 * @example
 * resolveStoreTimeoutMs(undefined); // 1000
 * resolveStoreTimeoutMs(Infinity);  // Infinity: no timeout
 * resolveStoreTimeoutMs(2 ** 31);   // throws: at most 2147483647 ms …
 */
export function resolveStoreTimeoutMs(value: unknown): number {
  if (value === undefined) return DEFAULT_STORE_TIMEOUT_MS;
  if (value === Number.POSITIVE_INFINITY) return value;
  assertPositive('storeTimeoutMs', value, ' of milliseconds');
  if (value > MAX_TIMER_MS) throw new RateKitOptionError('storeTimeoutMs', `at most ${MAX_TIMER_MS} ms (what Node's timers hold), or Infinity for no timeout`, value);
  return value;
}

/**
 * Bounds store calls by one `timeoutMs` with one timer for all of them,
 * instead of a timer, a race and their promises per call: a limiter makes
 * one and runs every store call through it. Calls bounded by the same
 * timeout reach their deadlines in the order they started, so pending calls
 * wait in a queue: a call that settles leaves it (with the calls before it
 * that have settled), the timer is set for the oldest pending call, and it
 * is cleared as soon as none is pending, so it never holds the process open
 * by itself. Deadlines are read from `performance.now()`, never from the
 * limiter's clock (which tests may fix).
 *
 * The bound function takes the store's call, an optional `onFulfilled`, an
 * `onRejected` that receives the call's own failure (`undefined`: the result
 * rejects with it), and an optional `onTimeout` that receives, when the call
 * has not settled within `timeoutMs`, a `RateKitError` of code
 * `ERR_RATEKIT_STORE` (`The <storeName> store did not answer within
 * <timeoutMs> ms`); without `onTimeout`, that error goes where the call's own
 * failure goes. It returns one promise of what they return (or throw). An
 * answer after the timeout is ignored; the call may still land on the store
 * (it errs strict). With `timeoutMs` `Infinity` there is no timer at all.
 *
 * @example
 * const bounded = storeCallBound(200, 'redis');
 * const decision = await bounded(store.evaluate(request), undefined, (error) => fallback(error));
 * // A timeout answered apart from the call's own failure:
 * const answer = await bounded(store.evaluate(request), undefined, undefined, () => failOpen());
 */
export function storeCallBound(timeoutMs: number, storeName: string): StoreCallBound {
  if (timeoutMs === Number.POSITIVE_INFINITY) return (call, onFulfilled, onRejected) => Promise.resolve(call).then(onFulfilled, onRejected);
  const queue: PendingCall[] = [];
  let head = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const arm = (delayMs: number) => {
    timer = setTimeout(expire, Math.max(1, Math.ceil(delayMs)));
  };
  // Drops the settled calls at the head; clears the timer when none is pending.
  const dropSettled = () => {
    while (head < queue.length && queue[head]!.settled) head++;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    } else if (head >= 1_024 && head * 2 >= queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };
  function expire() {
    timer = undefined;
    const nowMs = performance.now();
    while (head < queue.length) {
      const pending = queue[head]!;
      if (!pending.settled) {
        if (pending.deadlineMs > nowMs) break;
        pending.settled = true;
        pending.expire(new RateKitError('ERR_RATEKIT_STORE', `The ${storeName} store did not answer within ${timeoutMs} ms`));
      }
      head++;
    }
    dropSettled();
    // A failure's handler may have started a call, and with it the timer, meanwhile.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- pending.fail() above may re-arm the timer, which flow analysis cannot see
    if (head < queue.length && timer === undefined) arm(queue[head]!.deadlineMs - nowMs);
  }

  return <T, R>(
    call: PromiseLike<T>,
    onFulfilled: ((value: T) => R | PromiseLike<R>) | undefined,
    onRejected: ((error: unknown) => R | PromiseLike<R>) | undefined,
    onTimeout?: (error: RateKitError) => R | PromiseLike<R>,
  ) =>
    new Promise<R>((resolve, reject) => {
      // The promise takes what a handler returns, or rejects with what it throws.
      const answer = <A>(handler: (argument: A) => R | PromiseLike<R>, argument: A) => {
        try {
          resolve(handler(argument));
        } catch (thrown) {
          reject(thrown);
        }
      };
      const fail = onRejected === undefined ? reject : (error: unknown) => answer(onRejected, error);
      const pending: PendingCall = { deadlineMs: performance.now() + timeoutMs, settled: false, expire: onTimeout === undefined ? fail : (error) => answer(onTimeout, error) };
      queue.push(pending);
      if (timer === undefined) arm(timeoutMs);
      // True for the call's first outcome only (not after the deadline has failed it).
      const first = () => {
        if (pending.settled) return false;
        pending.settled = true;
        dropSettled();
        return true;
      };
      const failed = (error: unknown) => {
        if (first()) fail(error);
      };
      try {
        call.then((value) => {
          if (!first()) return;
          if (onFulfilled === undefined) resolve(value as unknown as R);
          else answer(onFulfilled, value);
        }, failed);
      } catch (thrown) {
        // A thenable whose then throws: a failure of the call like any other.
        failed(thrown);
      }
    });
}

/** A store call bounded by {@link storeCallBound}'s timeout: one promise of what `onFulfilled`, `onRejected` or `onTimeout` gives. */
export type StoreCallBound = <T, R = T>(
  call: PromiseLike<T>,
  onFulfilled: ((value: T) => R | PromiseLike<R>) | undefined,
  onRejected: ((error: unknown) => R | PromiseLike<R>) | undefined,
  onTimeout?: (error: RateKitError) => R | PromiseLike<R>,
) => Promise<R>;

interface PendingCall {
  readonly deadlineMs: number;
  settled: boolean;
  /** Answers the call with its timeout's error. */
  readonly expire: (error: RateKitError) => void;
}

/**
 * `promise`, bounded by `timeoutMs`: when it has not settled by then, the
 * result rejects with a `RateKitError` of code `ERR_RATEKIT_STORE`
 * (`The <storeName> store did not answer within <timeoutMs> ms`); `Infinity`
 * gives `promise` itself. The timer is cleared as soon as `promise` settles.
 * A call that times out may still land on the store later (it errs strict).
 * For many calls with one timeout, {@link storeCallBound} shares one timer.
 *
 * @example
 * await withStoreTimeout(redis.get(key), 1_000, 'redis');
 */
export function withStoreTimeout<T>(promise: Promise<T>, timeoutMs: number, storeName: string): Promise<T> {
  if (timeoutMs === Number.POSITIVE_INFINITY) return promise;
  return storeCallBound(timeoutMs, storeName)(promise, undefined, undefined);
}
