import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Check, Outcome } from './check.js';
import { headerWriter, writeHeaders } from './headers.js';
import type { Settings } from './options.js';
import { refusalError } from './refusal.js';
import { isThenable } from './then.js';
import type { RateLimitHookHandler } from './types.js';

/** Marks the hooks this plugin made, with the limiter they run, so a route never gets the same limiter twice. */
export const kLimiter: unique symbol = Symbol.for('@ratekit/fastify.limiter');

/** A hook made by this plugin. */
export type LimiterHook = RateLimitHookHandler & { readonly [kLimiter]: object };

type Done = (error?: unknown) => void;

/**
 * Builds the Fastify hook of one limiter. Callback-style, so a decision from
 * the in-memory store completes synchronously, with no promise or `await`.
 *
 * - admitted: headers (`addHeadersOnExceeding`), `onExceeding`, then on; a
 *   `delay`-algorithm admission is held for its `delayMs` first;
 * - refused: `onExceeded` (and `onBanReach`), headers (`addHeaders`), then the
 *   refusal error goes to `done(error)`, so it reaches `setErrorHandler`;
 * - allow-listed, or no IP for the default key: on, with no headers;
 * - a key, `max`, store or callback error: `done(error)`.
 *
 * Works as `onRequest`, `preValidation` and `preHandler` `(request, reply, done)`,
 * and as `preParsing` `(request, reply, payload, done)`. Called with no callback,
 * `(request, reply)`, it is an async hook: the promise resolves to go on and
 * rejects with what `done` would have been given.
 */
export function createHook(check: Check, settings: Settings, identity: object): LimiterHook {
  const headers = settings.headers === undefined ? undefined : headerWriter(settings.headers);
  function respond(request: FastifyRequest, reply: FastifyReply, outcome: Outcome, done: Done): void {
    let delayMs = 0;
    let error: object | undefined;
    try {
      if (outcome.kind === 'allowed') {
        if (headers !== undefined) writeHeaders(reply, outcome.decision, outcome.key, headers, settings.hiddenOnPass);
        settings.onExceeding?.(request, outcome.key);
        delayMs = outcome.decision.delayMs;
      } else if (outcome.kind === 'refused') {
        settings.onExceeded?.(request, outcome.key);
        if (outcome.banned) settings.onBanReach?.(request, outcome.key);
        if (headers !== undefined) writeHeaders(reply, outcome.decision, outcome.key, headers, settings.hiddenOnRefusal);
        error = refusalError(request, outcome, settings);
      }
    } catch (failure) {
      done(failure);
      return;
    }
    if (error !== undefined) done(error);
    else if (delayMs > 0) setTimeout(done, delayMs);
    else done();
  }

  function run(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    let outcome: ReturnType<Check>;
    try {
      outcome = check(request, true);
    } catch (error) {
      done(error);
      return;
    }
    if (isThenable(outcome)) outcome.then((o) => respond(request, reply, o, done), done);
    else respond(request, reply, outcome, done);
  }

  function rateLimit(request: FastifyRequest, reply: FastifyReply, doneOrPayload?: unknown, preParsingDone?: (error: unknown, payload?: unknown) => void): Promise<void> | void {
    if (preParsingDone === undefined && typeof doneOrPayload !== 'function') {
      return new Promise((resolve, reject) =>
        run(request, reply, (error) =>
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rejects with what `done` was given (a caught value, typed `{}` only because null and undefined are ruled out)
          error === undefined || error === null ? resolve() : reject(error),
        ),
      );
    }
    run(request, reply, preParsingDone === undefined ? (doneOrPayload as Done) : (error) => preParsingDone(error ?? null, doneOrPayload));
  }

  return Object.assign(rateLimit as unknown as RateLimitHookHandler, { [kLimiter]: identity });
}
