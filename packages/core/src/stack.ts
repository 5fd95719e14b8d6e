import type { Decision } from './decision.js';
import { RateKitOptionError } from './errors.js';
import type { CallOptions, Limiter } from './limiter.js';
import type { MaybePromise } from './stores/types.js';

/** A stack of limiters used as one. See {@link stackLimiters}. */
export interface LimiterStack<TContext = unknown> {
  /** Consumes from every limiter, all-or-nothing. Keys are given per limiter, in order. */
  consume(keys: readonly string[], options?: CallOptions<TContext>): MaybePromise<Decision>;
  /** What `consume` would answer now, charging nothing. */
  peek(keys: readonly string[], options?: CallOptions<TContext>): MaybePromise<Decision>;
}

/**
 * Stacks limiters, for example one per user and one per route, with the
 * all-or-nothing rule of a policy: the request passes only if every limiter
 * admits it, and if one refuses, none is charged.
 *
 * The limiters are consumed in order; when one refuses, the charges already
 * made are refunded, and the refused decision shows those limiters as the
 * refunds left them (`tokensPaid: 0`). With in-memory limiters this all
 * happens synchronously, so no other request can observe the intermediate state. With remote stores
 * another request may briefly see the charge before its refund; use one
 * limiter with several limits when that matters (one atomic round trip).
 * When a limiter throws (its store failed and its `onStoreError` is
 * `'throw'`), the charges already made are refunded before the error is
 * rethrown; if a refund fails too, an `AggregateError` holding every error
 * is thrown instead, so no failure goes unseen.
 *
 * @throws {RateKitOptionError} when given no limiters.
 * @example
 * ```ts
 * const stack = stackLimiters(perUser, perRoute);
 * const decision = await stack.consume([userId, route]);
 * ```
 */
export function stackLimiters<TContext = unknown>(...limiters: Limiter<TContext>[]): LimiterStack<TContext> {
  if (limiters.length === 0) throw new RateKitOptionError('limiters', 'at least one limiter', limiters);
  limiters.forEach((limiter, i) => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
    if (typeof limiter?.consume !== 'function') throw new RateKitOptionError(`limiters[${i}]`, 'a limiter', limiter);
  });

  function checkKeys(keys: readonly string[]): void {
    if (!Array.isArray(keys) || keys.length !== limiters.length) {
      throw new RateKitOptionError('keys', `an array of ${limiters.length} keys, one per limiter`, keys);
    }
  }

  return {
    consume(keys, options) {
      checkKeys(keys);
      const decisions: Decision[] = [];
      // Returns the final decision, or null to go on with the next limiter.
      const settle = (decision: Decision): MaybePromise<Decision> | null => {
        decisions.push(decision);
        if (!decision.allowed) return rollback(decisions, keys, options);
        return decisions.length === limiters.length ? merge(decisions, true) : null;
      };
      // A limiter that throws (its store failed and its onStoreError is 'throw') refunds the charges already made, then rethrows.
      const failed = (error: unknown): MaybePromise<never> => {
        const refunds = decisions.map((d, i) => settled(() => limiters[i]!.refund(keys[i]!, { ...options, cost: d.cost })));
        const rethrow = (outcomes: ReadonlyArray<PromiseSettledResult<unknown>>): never => {
          const refundErrors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
          if (refundErrors.length === 0) throw error;
          throw new AggregateError([error, ...refundErrors], 'A stacked limiter failed, and refunding the limiters before it failed too: their charges may stand');
        };
        // eslint-disable-next-line @typescript-eslint/await-thenable -- a mix of decisions and promises, some of them pending: Promise.all takes both
        return refunds.some((r) => r instanceof Promise) ? Promise.all(refunds).then(rethrow) : rethrow(refunds as PromiseSettledResult<unknown>[]);
      };
      const from = (start: number): MaybePromise<Decision> => {
        for (let i = start; i < limiters.length; i++) {
          let result: MaybePromise<Decision>;
          try {
            result = limiters[i]!.consume(keys[i]!, options);
          } catch (error) {
            return failed(error);
          }
          if (result instanceof Promise) return result.then((d) => settle(d) ?? from(i + 1), failed);
          const done = settle(result);
          if (done !== null) return done;
        }
        return merge(decisions, true);
      };
      return from(0);
    },
    peek(keys, options) {
      checkKeys(keys);
      const results = limiters.map((limiter, i) => limiter.peek(keys[i]!, options));
      if (results.some((r) => r instanceof Promise))
        // eslint-disable-next-line @typescript-eslint/await-thenable -- a mix of decisions and promises, some of them pending: Promise.all takes both
        return Promise.all(results).then((all) =>
          merge(
            all,
            all.every((d) => d.allowed),
          ),
        );
      const all = results as Decision[];
      return merge(
        all,
        all.every((d) => d.allowed),
      );
    },
  };

  function rollback(decisions: Decision[], keys: readonly string[], options: CallOptions<TContext> | undefined): MaybePromise<Decision> {
    const refunds = decisions.slice(0, -1).map((d, i) => limiters[i]!.refund(keys[i]!, { ...options, cost: d.cost }));
    // Report the refunded limiters as the refunds leave them (nothing paid), not with the charge that was undone.
    const refused = (undone: readonly Decision[]) => merge([...undone, decisions[decisions.length - 1]!], false);
    // eslint-disable-next-line @typescript-eslint/await-thenable -- a mix of decisions and promises, some of them pending: Promise.all takes both
    if (refunds.some((r) => r instanceof Promise)) return Promise.all(refunds).then(refused);
    return refused(refunds as Decision[]);
  }
}

/** Runs `call`, and describes how it settled: synchronously when it returned or threw, as a Promise when it returned one. */
function settled(call: () => MaybePromise<unknown>): MaybePromise<PromiseSettledResult<unknown>> {
  let result: MaybePromise<unknown>;
  try {
    result = call();
  } catch (reason) {
    return { status: 'rejected', reason };
  }
  if (result instanceof Promise) {
    return result.then(
      (value): PromiseSettledResult<unknown> => ({ status: 'fulfilled', value }),
      (reason: unknown): PromiseSettledResult<unknown> => ({ status: 'rejected', reason }),
    );
  }
  return { status: 'fulfilled', value: result };
}

/** Merges the decisions of stacked limiters with the same binding rule as one policy. */
function merge(decisions: readonly Decision[], allowed: boolean): Decision {
  let top = decisions[0]!;
  for (const d of decisions) {
    if (!allowed) {
      if (!d.allowed && (top.allowed || d.retryAfterMs > top.retryAfterMs)) top = d;
    } else if (d.remaining < top.remaining || (d.remaining === top.remaining && d.resetMs > top.resetMs)) top = d;
  }
  return {
    ...top,
    allowed,
    retryAfterMs: allowed ? 0 : top.retryAfterMs,
    delayMs: allowed ? Math.max(...decisions.map((d) => d.delayMs)) : 0,
    limits: decisions.flatMap((d) => d.limits),
  };
}
