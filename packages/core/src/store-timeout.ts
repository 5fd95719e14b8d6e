import { RateKitError, RateKitOptionError } from './errors.js';
import { assertPositive } from './validate.js';

/** The default `storeTimeoutMs`: a store call that has not answered in 1 s fails. */
export const DEFAULT_STORE_TIMEOUT_MS = 1_000;

/** The longest delay Node's timers hold; `setTimeout` turns a longer one into 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
 * `promise`, bounded by `timeoutMs`: when it has not settled by then, the
 * result rejects with a `RateKitError` of code `ERR_RATEKIT_STORE`
 * (`The <storeName> store did not answer within <timeoutMs> ms`); `Infinity`
 * gives `promise` itself. The timer is cleared as soon as `promise` settles.
 * A call that times out may still land on the store later (it errs strict).
 *
 * @example
 * await withStoreTimeout(redis.get(key), 1_000, 'redis');
 */
export function withStoreTimeout<T>(promise: Promise<T>, timeoutMs: number, storeName: string): Promise<T> {
  if (timeoutMs === Number.POSITIVE_INFINITY) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RateKitError('ERR_RATEKIT_STORE', `The ${storeName} store did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
