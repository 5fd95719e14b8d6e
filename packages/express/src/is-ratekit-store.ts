/**
 * Telling a ratekit store from an express-rate-limit one: a ratekit
 * `RateLimitStore` as `store` selects ratekit mode, and `RateKitStore` wraps
 * only ratekit stores.
 *
 * @module
 */
import type { RateLimitStore } from '@ratekit/core';

/** True for a ratekit store (`evaluate` + `resetKey`): the limiter then runs in ratekit mode. */
export function isRateKitStore(store: unknown): store is RateLimitStore {
  const candidate = store as Partial<RateLimitStore> | null | undefined;
  return typeof candidate?.evaluate === 'function' && typeof candidate.resetKey === 'function';
}
