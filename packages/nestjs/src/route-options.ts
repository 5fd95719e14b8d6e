import type { AlgorithmName } from '@ratekit/core';
import type { RateKitThrottlerOptions } from './options.js';

/**
 * One throttler's ratekit options on one route, from its levels, most specific first: the
 * handler's `@Throttle`, the controller's `@Throttle`, the module's throttler, the module's
 * `algorithm`. Each option is the most specific one given, except `burst`, which belongs to the
 * algorithm: a level that names an `algorithm` drops the `burst` of every less specific level.
 *
 * So a route that changes the algorithm starts from that algorithm's defaults: on a module
 * throttler `{ algorithm: 'token-bucket', burst: 20 }`, `@Throttle({ default: { algorithm:
 * 'sliding-window' } })` is a sliding window without a burst, and `@Throttle({ default: { limit:
 * 5 } })` keeps the bucket and its burst of 20. `blockDurationMs` is not the algorithm's, and is
 * inherited whatever the algorithm.
 *
 * @example
 * ```ts
 * mergeRateKitOptions([{ algorithm: 'sliding-window' }, undefined, { algorithm: 'token-bucket', burst: 20 }]);
 * // { algorithm: 'sliding-window', burst: undefined, blockDurationMs: undefined }
 * ```
 */
export function mergeRateKitOptions(levels: ReadonlyArray<RateKitThrottlerOptions | undefined>): RateKitThrottlerOptions {
  let algorithm: AlgorithmName | undefined;
  let burst: number | undefined;
  let blockDurationMs: number | undefined;
  for (const level of levels) {
    if (level === undefined) continue;
    // Until a level names the algorithm, a burst may still come from it or a less specific one.
    if (algorithm === undefined) burst ??= level.burst;
    algorithm ??= level.algorithm;
    blockDurationMs ??= level.blockDurationMs;
  }
  return { algorithm, burst, blockDurationMs };
}
