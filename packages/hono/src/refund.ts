/**
 * hono-rate-limiter's `skipFailedRequests` and `skipSuccessfulRequests` in ratekit mode: after the
 * response, give the decision's cost back when it is one to skip. A handler's throw, and Hono's
 * `c.error`, count as failures; otherwise `requestWasSuccessful` (default: status below 400) says.
 * The refund is background work (the runtime's `waitUntil`, or awaited), its failure reported.
 *
 * @module
 */
import { type Decision, type Gate, inBackground, type RefundOptions, type WaitUntil } from '@ratekit/core';
import type { Context, Next } from 'hono';

/** `next()`, then the refund the options ask for. */
export type Settle<TContext> = (c: TContext, next: Next, key: string, decision: Decision) => Promise<void>;

/**
 * The settle step of a middleware, or undefined when neither skip option is on (then `next()` is all).
 *
 * @param gate - the middleware's gate (its limiter refunds; its `report` takes failures)
 * @param options - the refund options, checked (core's `resolveRefundOptions`)
 * @param waitUntilOf - the context's `waitUntil`, if the runtime has one
 */
export function settler<TContext extends Context>(
  gate: Gate<TContext>,
  options: RefundOptions<(c: TContext) => boolean | Promise<boolean>>,
  waitUntilOf: (c: TContext) => WaitUntil | undefined,
): Settle<TContext> | undefined {
  const { skipFailedRequests, skipSuccessfulRequests } = options;
  if (!skipFailedRequests && !skipSuccessfulRequests) return undefined;
  const requestWasSuccessful = options.requestWasSuccessful ?? ((c: TContext) => c.res.status < 400);

  /** Gives the decision's cost back, as background work. */
  function refund(c: TContext, key: string, decision: Decision): Promise<void> | undefined {
    const done = Promise.resolve(gate.limiter.refund(key, gate.needsContext ? { cost: decision.cost, context: c } : { cost: decision.cost }));
    return inBackground(done, waitUntilOf(c), gate.report);
  }

  return async (c, next, key, decision) => {
    let succeeded: boolean;
    try {
      await next();
      // Hono turns a handler's throw into c.error and an error response; both count as failures.
      succeeded = c.error === undefined && (await requestWasSuccessful(c));
    } catch (error) {
      if (skipFailedRequests) await refund(c, key, decision);
      throw error;
    }
    if ((skipFailedRequests && !succeeded) || (skipSuccessfulRequests && succeeded)) await refund(c, key, decision);
  };
}
