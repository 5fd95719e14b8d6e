/**
 * The error of a deny-list threshold outside 1-8, `@upstash/ratelimit` 2.2.0's `ThresholdError`
 * (exported, as there, as `IpDenyList.ThresholdError`).
 *
 * @module
 */

/**
 * Thrown (as a rejection) by `IpDenyList.updateIpDenyList` for a threshold that is not a number
 * from 1 to 8, before any download. `name` is `ThresholdError`; the message is the incumbent's.
 *
 * @example
 * ```ts
 * await IpDenyList.updateIpDenyList(redis, prefix, 9).catch((error) => error instanceof IpDenyList.ThresholdError); // true
 * ```
 */
export class ThresholdError extends Error {
  constructor(threshold: unknown) {
    super(`Allowed threshold values are from 1 to 8, 1 and 8 included. Received: ${String(threshold)}`);
    this.name = 'ThresholdError';
  }
}

/** Whether `threshold` is a level of the IP feed: a number from 1 to 8 (the incumbent's test, NaN refused). */
export function isThreshold(threshold: unknown): threshold is number {
  return typeof threshold === 'number' && threshold >= 1 && threshold <= 8;
}
