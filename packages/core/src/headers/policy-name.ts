const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * The default policy name of a limit, byte for byte the name
 * express-rate-limit v8 gives its draft-8 policies (its default
 * `identifier`), so clients keyed on policy names see the same names after a
 * migration: `<limit>-in-<duration>`, where the duration is the window in
 * the largest unit that keeps it under the next unit:
 *
 * | window              | duration                      | example         |
 * |---------------------|-------------------------------|-----------------|
 * | under 60 s          | `<seconds>sec`                | `10-in-1sec`    |
 * | under 60 min        | `<minutes>min`                | `7-in-1.5min`   |
 * | under 24 h          | `<hours>hr`, `hrs` when > 1   | `50-in-2hrs`    |
 * | 24 h and more       | `<days>day`, `days` when > 1  | `1000-in-1day`  |
 *
 * Numbers are written as JavaScript writes them, fractions included and never
 * rounded (`7-in-1.5min`, `1-in-0.25sec`, `5-in-1.6666666666666667min`), as
 * express-rate-limit does.
 *
 * @param limit - the quota per window (the limit's `limit` option)
 * @param windowMs - the window, in ms
 * @returns a printable-ASCII name, stable across restarts
 * @see https://github.com/express-rate-limit/express-rate-limit `source/rate-limit.ts`, default `identifier`
 * @example
 * ```ts
 * defaultPolicyName(100, 15 * 60_000); // '100-in-15min'
 * defaultPolicyName(7, 90_000);        // '7-in-1.5min'
 * defaultPolicyName(5, 7_200_000);     // '5-in-2hrs'
 * ```
 */
export function defaultPolicyName(limit: number, windowMs: number): string {
  return `${limit}-in-${duration(windowMs)}`;
}

function duration(windowMs: number): string {
  const seconds = windowMs / SECOND_MS;
  if (seconds < 60) return `${seconds}sec`;
  const minutes = windowMs / MINUTE_MS;
  if (minutes < 60) return `${minutes}min`;
  const hours = windowMs / HOUR_MS;
  if (hours < 24) return `${hours}hr${hours > 1 ? 's' : ''}`;
  const days = windowMs / DAY_MS;
  return `${days}day${days > 1 ? 's' : ''}`;
}
