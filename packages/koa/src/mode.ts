/**
 * Options only @ratekit/koa has. A middleware given none of them is a
 * koa-ratelimit middleware and behaves as koa-ratelimit 6 does
 * (src/compat/); one given any of them runs on @ratekit/core (ratekit
 * mode, src/rate-limit.ts). `storeTimeoutMs` and `maxKeys` work in both
 * modes, so they do not choose one.
 */
export const RATEKIT_OPTIONS = ['algorithm', 'limits', 'cost', 'standardHeaders', 'legacyHeaders', 'store', 'onStoreError', 'onError', 'now', 'refusalCache'] as const;

/** One of {@link RATEKIT_OPTIONS}. */
export type RateKitOptionName = (typeof RATEKIT_OPTIONS)[number];

/** True when the options opt into ratekit mode: any ratekit-only option is given (not `undefined`). */
export function isRateKitMode(options: unknown): boolean {
  if (typeof options !== 'object' || options === null) return false;
  for (const name of RATEKIT_OPTIONS) if ((options as Record<string, unknown>)[name] !== undefined) return true;
  return false;
}
