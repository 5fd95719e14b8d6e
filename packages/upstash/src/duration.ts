/**
 * `Duration`: the window and interval strings of `@upstash/ratelimit` 2.2.0 (`"10 s"`, `"1 m"`,
 * `"5ms"`, `"1.5 h"`, `"2w"`), parsed to milliseconds by the incumbent's rule.
 *
 * @module
 */

/** The units a {@link Duration} may end with. */
export type Unit = 'ms' | 's' | 'm' | 'h' | 'd' | 'w';

/**
 * A duration as `@upstash/ratelimit` writes it: a non-negative decimal number, at most one space,
 * then a unit (`ms`, `s`, `m`, `h`, `d`, `w`).
 */
export type Duration = `${number} ${Unit}` | `${number}${Unit}`;

const UNIT_MS: Readonly<Record<Unit, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const DURATION = /^(\d+(?:\.\d+)?)\s?(ms|s|m|h|d|w)$/;

/**
 * Milliseconds in `duration`, rounded to the nearest whole millisecond.
 *
 * Follows `@upstash/ratelimit` 2.2.0's `ms()` (src/duration.ts): the same accepted forms and the
 * same errors, so a configuration that fails there fails here with the same message.
 *
 * @param duration - e.g. `"10 s"`, `"1m"`, `"250 ms"`, `"1.5 h"`
 * @returns the duration in ms, at least 1
 * @throws {Error} `Unable to parse window size: <duration>` when the text is not a duration;
 *   `Window size must be at least 1 ms, got: <duration>` when it rounds to 0 ms
 * @example
 * ```ts
 * ms('10 s'); // 10_000
 * ms('1.5m'); // 90_000
 * ```
 */
export function ms(duration: Duration): number {
  const match = DURATION.exec(duration);
  if (match === null) throw new Error(`Unable to parse window size: ${duration}`);
  const result = Math.round(Number.parseFloat(match[1]!) * UNIT_MS[match[2] as Unit]);
  if (result < 1) throw new Error(`Window size must be at least 1 ms, got: ${duration}`);
  return result;
}
