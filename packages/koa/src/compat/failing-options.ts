import { RateKitOptionError } from '@ratekit/core';

/**
 * koa-ratelimit mode takes options as koa-ratelimit 6 does, wrong types
 * included, except a value that can only fail: one that makes every request
 * (or every refusal) a 500 or a 429, or puts a non-finite number in a
 * header. Those are refused here, when the middleware is built.
 *
 * | option | refused when (koa-ratelimit would…) |
 * | --- | --- |
 * | `id` | given and not a function (`opts.id(ctx)` throws on every request: 500) |
 * | `namespace` | it cannot become a string (an object with a null prototype: 500 on every request) |
 * | `max` | its number is NaN or -Infinity (every request refused), or it cannot become a number (a symbol, a bigint: 500); `Infinity` while the headers are on (`X-RateLimit-Limit: Infinity`) |
 * | `duration` | its number (in µs, as the driver counts) is not finite (`X-RateLimit-Reset: NaN`, and a window that never ends), or it cannot become one |
 * | `status` | truthy and not an integer from 100 to 999 (Koa refuses it: 500 on every refusal); with `throw`, 600 or more (http-errors makes it a 500) |
 * | `errorMessage` | a symbol, a function or a bigint (Koa cannot send it: 500 on every refusal); with `throw`, a number or `true` (http-errors refuses it) |
 *
 * Falsy `status` and `errorMessage` keep koa-ratelimit's fallbacks (`opts.status || 429`, its default message).
 *
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option, what it expects and what it got
 */
export function refuseWhatCanOnlyFail(options: Readonly<Record<string, unknown>>): void {
  const { id, namespace, max, duration, status, errorMessage } = options;
  const throwMode = Boolean(options.throw);
  if (id !== undefined && typeof id !== 'function') throw new RateKitOptionError('id', 'a function of the context returning the client key (or false to let the request through)', id);
  if (namespace !== undefined && typeof namespace !== 'symbol') {
    try {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only whether it can be made a string matters (a null-prototype object cannot), as the incumbent makes it one
      String(namespace);
    } catch {
      throw new RateKitOptionError('namespace', 'a string', namespace);
    }
  }
  if (max !== undefined) {
    const count = numberOf(max);
    const headersOn = !options.disableHeader;
    if (count === undefined || Number.isNaN(count) || count === Number.NEGATIVE_INFINITY || (headersOn && count === Number.POSITIVE_INFINITY)) {
      throw new RateKitOptionError('max', `a number of requests${headersOn ? ', finite (it is sent in X-RateLimit-Limit)' : ''}`, max);
    }
  }
  if (duration !== undefined) {
    const ms = numberOf(duration);
    // The memory driver counts in microseconds, as koa-ratelimit's does: `duration × 1000` must be finite too.
    if (ms === undefined || !Number.isFinite(ms * 1_000)) throw new RateKitOptionError('duration', 'a finite number of milliseconds', duration);
  }
  if (status) {
    const valid = Number.isInteger(status) && (status as number) >= 100 && (status as number) <= (throwMode ? 599 : 999);
    if (!valid) throw new RateKitOptionError('status', `an HTTP status code, an integer from 100 to ${throwMode ? '599 (with throw)' : '999'}`, status);
  }
  const unsendable = typeof errorMessage === 'symbol' || typeof errorMessage === 'function' || typeof errorMessage === 'bigint';
  if (unsendable || (throwMode && errorMessage && (typeof errorMessage === 'number' || typeof errorMessage === 'boolean'))) {
    throw new RateKitOptionError('errorMessage', `a string${throwMode ? ' or an object of error properties (with throw)' : ', a Buffer, a stream or a value sent as JSON'}`, errorMessage);
  }
}

/** The value as koa-ratelimit's arithmetic uses it; undefined when that throws (a symbol, a bigint, an object with no way to a number). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'bigint') return undefined;
  try {
    return Number(value);
  } catch {
    return undefined;
  }
}
