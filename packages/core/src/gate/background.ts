/**
 * The gate's background rule: work after the response. Where the runtime lets a request's work
 * outlive its response (a Worker's `ctx.waitUntil`, Next.js's `event.waitUntil`, Hono's
 * `c.executionCtx.waitUntil`), background work is handed to it, so the answer does not wait.
 * Without one (Node, Bun and Deno servers) it is awaited before the request goes on: a serverless
 * host may freeze a process once it has answered, and work it froze would be lost without a word.
 *
 * Why it is safe: a failure goes to `report` (the adapter's `onError`) and never reaches the
 * response, and the promise handed over never rejects, so no runtime sees an unhandled rejection.
 *
 * @module
 */

/** A runtime's `waitUntil`, bound: `(promise) => ctx.waitUntil(promise)`. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * Runs `work` (a value or a Promise) after the response where `waitUntil` is given, else now.
 *
 * @param work - what a hook returned; anything but a thenable is done already
 * @param waitUntil - the runtime's, or `undefined` where there is none
 * @param report - receives a rejection of `work`
 * @returns what to await before the request goes on: nothing once handed over, or when `work` was no thenable
 * @example
 * ```ts
 * await inBackground(onDecision(decision), (p) => ctx.waitUntil(p), onError);
 * ```
 */
export function inBackground(work: unknown, waitUntil: WaitUntil | undefined, report: (error: unknown) => void): Promise<void> | undefined {
  if (typeof (work as { then?: unknown } | null | undefined)?.then !== 'function') return undefined;
  const settled = Promise.resolve(work).then(
    () => undefined,
    (error: unknown) => {
      report(error);
    },
  );
  if (waitUntil === undefined) return settled;
  waitUntil(settled);
  return undefined;
}
