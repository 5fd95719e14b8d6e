/**
 * What a limiter does when its store fails or does not answer within `storeTimeoutMs`: the
 * `onStoreError` policy. The rule: a failure is never swallowed. Under `'throw'` the call fails with
 * `ERR_RATEKIT_STORE`; otherwise the error goes to `onError` (and to the `ratekit:store-error`
 * channel) and the call is answered as the policy says: `'allow'` admits, `'deny'` refuses (retry
 * after 1 s), and a fallback limiter decides in the store's place.
 *
 * @module
 */
import type { Decision } from './decision.js';
import { RateKitError } from './errors.js';
import { storeErrorChannel } from './events.js';
import type { ResolvedLimit } from './limit.js';
import type { CallOptions, StoreErrorPolicy } from './limiter.js';
import { evaluatePolicy, type EvaluateMode } from './policy.js';
import type { MaybePromise } from './stores/types.js';

/** A limiter's failure handling, built once. */
export interface StoreFailure<TContext> {
  /** Throws the store error under `'throw'`; otherwise hands it to `onError`. */
  report(error: unknown, key: string): void;
  /** Reports the error, then answers the call as `onStoreError` says. */
  recover(
    error: unknown,
    mode: EvaluateMode,
    key: string,
    call: CallOptions<TContext> | undefined,
    limits: readonly ResolvedLimit[],
    nowMs: number,
    costOf: (call: CallOptions<TContext> | undefined) => number,
  ): MaybePromise<Decision>;
}

/** The failure handling of a limiter on the store named `storeName`. */
export function storeFailure<TContext>(storeName: string, namespace: string, onStoreError: StoreErrorPolicy, onError: (error: RateKitError) => void): StoreFailure<TContext> {
  /** Throws the store error under `'throw'`; otherwise hands it to `onError` so it is never swallowed. */
  function report(error: unknown, key: string): void {
    const wrapped =
      error instanceof RateKitError && error.code === 'ERR_RATEKIT_STORE'
        ? error
        : new RateKitError('ERR_RATEKIT_STORE', `The ${storeName} store failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    if (storeErrorChannel.hasSubscribers) {
      const policy = typeof onStoreError === 'object' ? 'fallback' : onStoreError;
      storeErrorChannel.publish({ prefix: namespace, key, store: storeName, error: wrapped, onStoreError: policy });
    }
    if (onStoreError === 'throw') throw wrapped;
    onError(wrapped);
  }

  /** Reports the error, then answers the call as `onStoreError` says. */
  function recover(
    error: unknown,
    mode: EvaluateMode,
    key: string,
    call: CallOptions<TContext> | undefined,
    limits: readonly ResolvedLimit[],
    nowMs: number,
    costOf: (call: CallOptions<TContext> | undefined) => number,
  ): MaybePromise<Decision> {
    report(error, key);
    if (typeof onStoreError === 'object') return onStoreError[mode](key, call);
    const fresh = evaluatePolicy(
      limits.map(() => undefined),
      limits,
      0,
      'peek',
      nowMs,
    ).decision;
    const allowed = onStoreError === 'allow';
    return { ...fresh, allowed, retryAfterMs: allowed ? 0 : 1_000, cost: costOf(call) };
  }

  return { report, recover };
}
