/**
 * ratekit mode: Express middleware on @ratekit/core's gate. The pipeline (skip, key, decision,
 * header list, refusal body, delay hold, background work) is core's `createGate`; this file supplies
 * what Express differs in: the client address is `req.ip` (Express's `trust proxy` setting decides
 * it), fields are set on `res` (draft-8+ lists appended, so stacked limiters each add their policy),
 * the decision goes on `req[requestPropertyName]` in express-rate-limit's shape, a refusal is
 * `handler(req, res, next, options)` or `statusCode` and `message` sent with `res.send`, a held
 * pass stops waiting when the response closes, and `skipFailedRequests`/`skipSuccessfulRequests`
 * give the cost back once the response has ended. Failures go to `next(err)`.
 *
 * @module
 */
import { createGate, type Decision, DEFAULT_REFUSAL_MESSAGE, type GateDecided, type GateOutcome, holdFor, type MaybePromise } from '@ratekit/core';
import type { NextFunction, Request, Response } from 'express';
import { isThenable } from './maybe.js';
import { publishInfo } from './publish.js';
import { RENAMED, resolveRateKitOptions } from './ratekit-options.js';
import { settlingNext } from './settling-next.js';
import { type ResponseWatch, uncountWhenSkipped, watchResponse } from './skip-requests.js';
import type { ClientRateLimitInfo, RateLimitOptions, RateLimitRequestHandler, ResolvedRateLimitOptions } from './types.js';
import { writeHeaders } from './write-headers.js';

/** The middleware of ratekit mode (see `rateLimit`). @throws {RateKitOptionError} naming the first bad option */
export function rateKitMiddleware(options: RateLimitOptions): RateLimitRequestHandler {
  const { gate: gateOptions, express } = resolveRateKitOptions(options);
  const gate = createGate(gateOptions, { name: 'rateLimit()', renamed: RENAMED, standardHeaders: false, headers: { combineLists: true }, forwardedFor: () => undefined });
  const { limiter } = gate;
  const { handler } = options;
  const standard = options.standardHeaders;
  const appendLists = typeof standard === 'string' && standard !== 'draft-6' && standard !== 'draft-7';
  // What `handler` is given: the options, with the status and express-rate-limit's message (never given beside it), the mode and limiter.
  const optionsUsed = Object.freeze({ ...options, statusCode: gate.statusCode, message: DEFAULT_REFUSAL_MESSAGE, mode: 'ratekit', limiter }) as unknown as ResolvedRateLimitOptions;

  function respond(req: Request, res: Response, next: NextFunction, settle: () => void, watch: ResponseWatch | undefined, outcome: GateOutcome): void {
    if (outcome.key === undefined) return void next();
    const observed = gate.observe(outcome, req, undefined);
    if (observed === undefined) answer(req, res, next, settle, watch, outcome);
    else observed.then(() => answer(req, res, next, settle, watch, outcome)).catch(next);
  }

  function answer(req: Request, res: Response, next: NextFunction, settle: () => void, watch: ResponseWatch | undefined, { key, decision, headers }: GateDecided): void {
    if (!res.headersSent) writeHeaders(res, headers, appendLists);
    const count = Math.max(0, decision.limit - decision.remaining);
    publishInfo(req, express.requestPropertyName, { limit: decision.limit, used: count, remaining: decision.remaining, resetTime: new Date(decision.nowMs + decision.resetMs), key, decision }, count);
    if (!decision.allowed) return refuse(req, res, next, settle, decision);
    if (watch !== undefined) {
      const cost = gate.needsContext ? { cost: decision.cost, context: req } : { cost: decision.cost };
      uncountWhenSkipped(req, res, watch, express, { undo: () => limiter.refund(key, cost), report: gate.report });
    }
    if (decision.delayMs <= 0) return void next();
    // Express has no AbortSignal: the response's `close` (the client left) ends the hold.
    const closed = new AbortController();
    res.once('close', () => closed.abort());
    void holdFor(decision.delayMs, closed.signal).then(() => (closed.signal.aborted ? settle() : next()));
  }

  /** `handler`, or `statusCode` and the gate's refusal body; the middleware's promise settles once it has answered. */
  function refuse(req: Request, res: Response, next: NextFunction, settle: () => void, decision: Decision): void {
    let answered: unknown;
    try {
      answered = handler === undefined ? send(req, res, decision) : handler(req, res, next, optionsUsed);
    } catch (error) {
      return void next(error);
    }
    if (isThenable(answered)) answered.then(settle, next);
    else settle();
  }

  function send(req: Request, res: Response, decision: Decision): unknown {
    res.status(gate.statusCode);
    const body = gate.refusalBody(req, decision);
    return isThenable(body) ? body.then((value) => sendBody(res, value)) : sendBody(res, body);
  }

  const middleware = (req: Request, res: Response, next: NextFunction): Promise<void> => {
    // Settles once the request is passed on or answered (as express-rate-limit's); never rejects.
    const { done, settle, proceed } = settlingNext(next);
    const watch = watchResponse(res, express);
    const outcome = gate.decide(req, gate.needsAddress ? req.ip : undefined);
    if (outcome instanceof Promise) outcome.then((o) => respond(req, res, proceed, settle, watch, o)).catch(proceed);
    else respond(req, res, proceed, settle, watch, outcome);
    return done;
  };
  Object.defineProperty(middleware, 'name', { value: '' });
  return Object.assign(middleware, { limiter, resetKey: (key: string) => limiter.reset(key), getKey: (key: string) => hitsOf(limiter.peek(key)) }) as RateLimitRequestHandler;
}

/** Sends a refusal's body, unless the response has ended. */
function sendBody(res: Response, body: unknown): void {
  if (!res.writableEnded) res.send(body);
}

/** A peeked decision as express-rate-limit's `{ totalHits, resetTime }`, `undefined` for a key with nothing counted. */
function hitsOf(decision: MaybePromise<Decision>): MaybePromise<ClientRateLimitInfo | undefined> {
  const convert = (d: Decision): ClientRateLimitInfo | undefined => {
    const hits = Math.max(0, Math.ceil(d.limit - d.remaining));
    return hits === 0 && d.resetMs === 0 ? undefined : { totalHits: hits, resetTime: new Date(d.nowMs + d.resetMs) };
  };
  return isThenable(decision) ? decision.then(convert) : convert(decision);
}
