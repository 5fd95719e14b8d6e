/**
 * Work after the response: where the runtime lets a request's work outlive
 * its response (Cloudflare Workers, and Hono apps given an execution context:
 * `c.executionCtx.waitUntil`), background work (the refund of
 * `skipFailedRequests`/`skipSuccessfulRequests`, the `onDecision` hook) is
 * handed to it, so the response does not wait. Elsewhere (Node, Bun, Deno
 * without one) it is awaited before the middleware returns, so nothing runs
 * after the response is finished and every failure is still seen.
 *
 * A failure in background work is passed to `onError`, never swallowed.
 * Hono's `c.executionCtx` throws when the context has none; that is checked,
 * not relied upon.
 *
 * @module
 */
import type { Context } from 'hono';

/** What `c.executionCtx` offers (`ExecutionContext` of Workers). */
interface WaitUntilContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** The context's `waitUntil`, bound, or `undefined` when the runtime gave none. */
export function waitUntilOf(c: Context): ((promise: Promise<unknown>) => void) | undefined {
  let ctx: Partial<WaitUntilContext> | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    return undefined; // Hono: "This context has no ExecutionContext"
  }
  return typeof ctx.waitUntil === 'function' ? ctx.waitUntil.bind(ctx) : undefined;
}

/**
 * Runs `work` after the response where the runtime allows it, else now:
 * returns a Promise to await (resolved at once when handed to `waitUntil`).
 * A rejection of `work` goes to `onError`.
 */
export function afterResponse(c: Context, work: Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
  const settled = work.then(
    () => undefined,
    (error: unknown) => onError(error),
  );
  const waitUntil = waitUntilOf(c);
  if (waitUntil === undefined) return settled;
  waitUntil(settled);
  return Promise.resolve();
}
