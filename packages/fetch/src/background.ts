/**
 * Work after the response. Where the runtime lets a request's work outlive
 * its response (a Worker's `ctx.waitUntil`, Next.js's `event.waitUntil`,
 * Vercel's `waitUntil`), background work is handed to it, so the answer does
 * not wait for it. Without one (Bun, Deno and Node servers) it is awaited
 * before the call resolves: a serverless host may freeze a process once it
 * has answered, and work it froze would be lost without a word.
 *
 * The rule that keeps it safe: a background failure is passed to `onError`
 * and never reaches the response, and the promise handed over never rejects,
 * so a runtime sees no unhandled rejection.
 *
 * @module
 */

/** What has `waitUntil`: a Worker's `ExecutionContext`, a Next.js `NextFetchEvent`. */
export interface WaitUntilContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Runs `work` (a value or a Promise) after the response where `context` lets
 * it, else now: returns what to await (nothing once it is handed over).
 * A rejection goes to `report`.
 */
export function inBackground(work: unknown, context: WaitUntilContext | undefined, report: (error: unknown) => void): Promise<void> | undefined {
  if (!isThenable(work)) return undefined;
  const settled = Promise.resolve(work).then(
    () => undefined,
    (error: unknown) => {
      report(error);
    },
  );
  if (context === undefined) return settled;
  context.waitUntil(settled);
  return undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
