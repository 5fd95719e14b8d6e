/**
 * `limiter.wait(key, { maxWaitMs })`: consume, waiting for the budget instead of being refused. The
 * rule: a refusal is retried after its `retryAfterMs`, and a pass the `delay` algorithm admits late is
 * held for its `delayMs`, as long as the wait fits in `maxWaitMs` from the first call; a wait that
 * cannot fit fails at once with `ERR_RATEKIT_WAIT_TIMEOUT`, having charged nothing (a held pass that
 * would outlast the budget, or is aborted while held, is refunded). A cost no limit can ever admit
 * fails with `ERR_RATEKIT_NEVER_SATISFIABLE` rather than waiting for ever.
 *
 * @module
 */
import type { Decision } from './decision.js';
import { RateKitError } from './errors.js';
import type { EvaluateMode } from './policy.js';
import type { CallOptions, WaitOptions } from './limiter.js';
import type { MaybePromise } from './stores/types.js';
import { assertNonNegative, assertObject } from './validate.js';

/**
 * Waits for `key`'s budget through `decide` (the limiter's consume and refund).
 * @throws {RateKitError} `ERR_RATEKIT_WAIT_TIMEOUT`, `ERR_RATEKIT_NEVER_SATISFIABLE`; the signal's reason when aborted
 */
export async function waitFor<TContext>(
  decide: (mode: EvaluateMode, key: string, call: CallOptions<TContext> | undefined) => MaybePromise<Decision>,
  now: () => number,
  key: string,
  call: WaitOptions<TContext>,
): Promise<Decision> {
  assertObject('options', call);
  assertNonNegative('maxWaitMs', call.maxWaitMs, ' of milliseconds');
  const deadline = now() + call.maxWaitMs;
  for (;;) {
    call.signal?.throwIfAborted();
    const decision = await decide('consume', key, call);
    const left = deadline - now();
    if (decision.allowed) {
      if (decision.delayMs <= 0) return decision;
      if (decision.delayMs <= left) {
        try {
          await sleep(decision.delayMs, call.signal);
        } catch (reason) {
          // Aborted while holding an admitted call: give its charge back.
          await decide('refund', key, { ...call, cost: decision.cost });
          throw reason;
        }
        return decision;
      }
      await decide('refund', key, { ...call, cost: decision.cost });
      throw waitTimeout(decision.delayMs, call.maxWaitMs);
    }
    if (decision.retryAfterMs === Infinity) {
      throw new RateKitError('ERR_RATEKIT_NEVER_SATISFIABLE', `A cost of ${decision.cost} exceeds the capacity of limit "${decision.policy}"`);
    }
    if (decision.retryAfterMs > left) throw waitTimeout(decision.retryAfterMs, call.maxWaitMs);
    await sleep(Math.max(1, Math.ceil(decision.retryAfterMs)), call.signal);
  }
}

function waitTimeout(neededMs: number, maxWaitMs: number): RateKitError {
  return new RateKitError('ERR_RATEKIT_WAIT_TIMEOUT', `The budget allows this call in ${Math.ceil(neededMs)} ms, longer than maxWaitMs (${maxWaitMs} ms); nothing was charged`);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
