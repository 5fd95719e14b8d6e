import { type Decision, headerListOf, type MaybePromise, RateKitError } from '@ratekit/core';
import type { NextFunction, Request, Response } from 'express';
import { writeHeaders } from './write-headers.js';
import { keyError } from './key-error.js';
import { after, isThenable } from './maybe.js';
import { publishInfo } from './publish.js';
import { settlingNext } from './settling-next.js';
import type { RateKitConfig } from './ratekit-options.js';
import { uncountWhenSkipped, watchResponse } from './skip-requests.js';
import type { RateLimitInfo } from './types.js';

/** The header that shows how long a request was held (delay algorithm, slowDown), in ms. */
export const DELAY_HEADER = 'X-Slow-Down-Delay';

/**
 * The ratekit mode middleware: one decision of the core limiter per request.
 *
 * Per request: `skip` → key (default: the client IP, `trust proxy`-aware,
 * IPv6 grouped by /56) → one decision → headers on every response →
 * `req[requestPropertyName]` → `next()`, or `handler` (default: 429 and
 * `message`, with `Retry-After`). Refusals charge nothing. With the
 * in-memory store the whole path is synchronous: no promise, no `await`.
 * The `delay` algorithm admits over-rate requests after `delayMs` (held with
 * a timer, dropped if the client disconnects, shown in `X-Slow-Down-Delay`).
 *
 * Errors go to `next(err)`: a `keyGenerator` that throws or returns no usable
 * key (code `ERR_RATEKIT_KEY`), a store failure under `onStoreError: 'throw'`
 * (code `ERR_RATEKIT_STORE`), a throwing `skip`, `limits`, `cost` or `handler`.
 */
export function rateKitMiddleware(config: RateKitConfig): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  const { limiter, consume: decide, keyGenerator, customKey, needsContext, headers, requestPropertyName, validations } = config;
  const storeIdentity = limiter.store.shared ? limiter.store.name : limiter.store;
  const appendLists = config.standard.draft !== false && config.standard.draft !== 'draft-6' && config.standard.draft !== 'draft-7';
  // core's rateLimitHeaders(decision, headers), built once per second of a flood, not once per refusal.
  const headerList = headers === undefined ? undefined : headerListOf(headers);

  function limit(req: Request, res: Response, next: NextFunction, settle: () => void): void {
    const watch = watchResponse(res, config);
    let key: unknown;
    try {
      key = keyGenerator(req, res);
    } catch (error) {
      next(customKey ? keyError({ threw: error }) : error);
      return;
    }
    if (isThenable(key))
      Promise.resolve(key).then(
        (k) => consume(req, res, next, k, watch, settle),
        (error: unknown) => next(customKey ? keyError({ threw: error }) : error),
      );
    else consume(req, res, next, key, watch, settle);
  }

  function consume(req: Request, res: Response, next: NextFunction, key: unknown, watch: ReturnType<typeof watchResponse>, settle: () => void): void {
    if (typeof key !== 'string' || key.length === 0) {
      // The default generator returns undefined only for a request without an IP, already reported.
      next(customKey || key !== undefined ? keyError({ returned: key }) : undefined);
      return;
    }
    let decision: MaybePromise<Decision>;
    try {
      // A cached refusal comes back as a value (consumeInAnyForm): no Promise, no closure, no microtask.
      decision = needsContext ? decide(key, { context: req }) : decide(key);
    } catch (error) {
      next(error);
      return;
    }
    // `next` takes failures too: every caller below hands it exactly one argument, the error.
    if (isThenable(decision)) decision.then((d) => respond(req, res, next, key, d, watch, next, settle)).catch(next);
    else respond(req, res, next, key, decision, watch, next, settle);
  }

  function respond(
    req: Request,
    res: Response,
    next: NextFunction,
    key: string,
    decision: Decision,
    watch: ReturnType<typeof watchResponse>,
    fail: (error: unknown) => void,
    settle: () => void,
  ): void {
    validations.singleCount(req, storeIdentity, `${config.prefix}\u0000${key}`, key);
    if (headers !== undefined && headerList !== undefined && !res.headersSent) {
      headers.partitionKey = key; // safe to share: the call below is synchronous
      writeHeaders(res, headerList(decision), appendLists);
    }
    if (config.standard.unsupported && !res.headersSent) validations.headersDraftVersion(config.public.standardHeaders);
    const used = Math.max(0, decision.limit - decision.remaining);
    const info: RateLimitInfo = { limit: decision.limit, used, remaining: decision.remaining, resetTime: new Date(decision.nowMs + decision.resetMs), key, decision };
    publishInfo(req, requestPropertyName, info, used);
    if (!decision.allowed) {
      refuse(req, res, next, fail, settle);
      return;
    }
    if (watch !== undefined) {
      uncountWhenSkipped(req, res, watch, config, {
        undo: () => limiter.refund(key, needsContext ? { cost: decision.cost, context: req } : { cost: decision.cost }),
        report: (error, during) => config.onError(refundError(error, during)),
      });
    }
    if (decision.delayMs > 0) {
      const delayMs = Math.ceil(decision.delayMs);
      if (!res.headersSent) res.setHeader(DELAY_HEADER, String(delayMs));
      const timer = setTimeout(next, delayMs);
      res.once('close', () => {
        clearTimeout(timer);
        settle();
      });
      return;
    }
    next();
  }

  function refuse(req: Request, res: Response, next: NextFunction, fail: (error: unknown) => void, settle: () => void): void {
    if (config.retryAfter === undefined) {
      answer(req, res, next, fail, settle);
      return;
    }
    after(
      typeof config.retryAfter === 'function' ? config.retryAfter(req, res) : config.retryAfter,
      (seconds) => {
        if (config.standard.retryAfter && !res.headersSent) res.setHeader('Retry-After', String(seconds));
        answer(req, res, next, fail, settle);
      },
      fail,
    );
  }

  /** The refusal's answer: `handler`, settling the middleware's promise once it has answered. A function of its own, so a refusal makes no closure. */
  function answer(req: Request, res: Response, next: NextFunction, fail: (error: unknown) => void, settle: () => void): void {
    const result = config.handler(req, res, next, config.public);
    if (isThenable(result)) Promise.resolve(result).then(settle, fail);
    else settle();
  }

  const middleware = (req: Request, res: Response, next: NextFunction): Promise<void> => {
    // Settles once the request is passed on or answered (as express-rate-limit's); never rejects.
    const { done, settle, proceed } = settlingNext(next);
    try {
      const { skip } = config;
      if (skip === undefined) limit(req, res, proceed, settle);
      else
        after(
          skip(req, res),
          (skipped) => (skipped ? proceed() : limit(req, res, proceed, settle)),
          (error) => proceed(error),
        );
    } catch (error) {
      proceed(error);
    }
    return done;
  };
  Object.defineProperty(middleware, 'name', { value: '' });
  return middleware;
}

/** A failed refund, as an error for `onError`. */
function refundError(error: unknown, during: 'decrement' | 'callback' | 'close' | 'error'): RateKitError {
  if (error instanceof RateKitError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  if (during === 'callback') {
    // No code fits a user callback failing at run time better than the option's own.
    return new RateKitError('ERR_RATEKIT_INVALID_OPTION', `\`requestWasSuccessful\` threw, so nothing was refunded: ${reason}`, { cause: error });
  }
  return new RateKitError('ERR_RATEKIT_STORE', `The refund failed: ${reason}`, { cause: error });
}
