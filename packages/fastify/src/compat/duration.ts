import { parse } from '@lukeed/ms';
import { RateKitOptionError } from '@ratekit/core';

/**
 * Reads a `timeWindow`: milliseconds, or a duration string such as
 * `'1 minute'`, `'10s'`, `'1.5h'` or `'500'` (ms), parsed by `@lukeed/ms` as
 * @fastify/rate-limit does. Parsed once, at registration.
 *
 * @param option - the option path for the error message
 * @returns the window in ms, a positive finite number
 * @throws {RateKitOptionError} when the value is not a positive duration
 * @example
 * ```ts
 * parseTimeWindow('1 minute', 'timeWindow'); // 60_000
 * ```
 */
export function parseTimeWindow(value: unknown, option: string): number {
  const ms = typeof value === 'string' ? parse(value) : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
    throw new RateKitOptionError(option, "a positive number of milliseconds or a duration string such as '1 minute'", value);
  }
  return ms;
}
