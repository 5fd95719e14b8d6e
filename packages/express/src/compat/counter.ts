import type { NextFunction, Request, Response } from 'express';
import { type CountedState, counterRetryAfter, writeLegacyCounterHeaders, writeStandardCounterHeaders } from './headers.js';
import { after, isThenable } from '../maybe.js';
import { publishInfo } from '../publish.js';
import { settlingNext } from '../settling-next.js';
import type { CounterConfig } from './options.js';
import { type ResponseWatch, uncountWhenSkipped, watchResponse } from '../skip-requests.js';
import type { ClientRateLimitInfo, RateLimitInfo } from '../types.js';

/** A counted request, handed to the outcome once its info and headers are set. */
export interface Counted {
  readonly req: Request;
  readonly res: Response;
  readonly next: NextFunction;
  readonly info: RateLimitInfo;
  readonly totalHits: number;
  /** Settles the middleware's promise: call it when the outcome has answered without `next` (the handler's work is done), or has set a timer to call it later (slowDown's hold). */
  readonly done: () => void;
}

/**
 * What happens to a counted request: rateLimit refuses it over the limit,
 * slowDown holds it. `limitOf` gives the number reported as `limit` (and
 * compared with the hits): `limit` for rateLimit, `delayAfter` for slowDown.
 */
export interface Outcome {
  limitOf(req: Request, res: Response): unknown;
  /** Runs after `req[requestPropertyName]` and the headers are set; must end with `next()`, `next(err)` or a response. */
  settle(counted: Counted, fail: (error: unknown) => void): void;
  /** True for rateLimit: a count over `limit` is a refusal, with `Retry-After` and the `limit` check (`WRN_ERL_MAX_ZERO`). */
  readonly refuses: boolean;
  /** True for {@link refuseOverLimit}'s outcome, whose steps the synchronous path of {@link counterMiddleware} repeats inline. */
  readonly refusesOverLimit?: boolean;
}

/** What the synchronous path returns once its work is done. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * The express-rate-limit mode middleware: express-rate-limit v8's steps, in
 * its order, on any express-rate-limit store.
 *
 * 1. watch the response when a skip option is on; 2. `skip`; 3. the key;
 * 4. `store.increment(key)` (a failure goes to `next(err)`, or with
 * `passOnStoreError` is logged and the request passes, unlimited and without
 * headers); 5. the `positiveHits` and `singleCount` checks; 6. `limit`
 * (a function is called now); 7. `req[requestPropertyName]`; 8. legacy
 * headers; 9. standard headers; 10. the skip hooks; 11. the outcome.
 *
 * With the default {@link MemoryStore} and plain-valued options the whole
 * path is synchronous. Any throw or rejection reaches `next(err)`.
 */
export function counterMiddleware(config: CounterConfig, outcome: Outcome): (req: Request, res: Response, next: NextFunction) => Promise<void> {
  const { store, counter, validations, logger, keyGenerator, requestPropertyName } = config;
  const storeIdentity = store.localKeys ? store : store.constructor.name;
  const storePrefix = store.prefix ?? '';

  /** A store that failed: `next(err)`, or with `passOnStoreError` logged and passed on, unlimited and without headers. */
  function storeFailure(error: unknown, next: NextFunction): void {
    if (!config.passOnStoreError) {
      next(error);
      return;
    }
    logger.error(error, 'express-rate-limit: error from store, allowing request without rate-limiting.');
    next();
  }

  /** Step 5: the `positiveHits` and `singleCount` checks. */
  function checkHits(req: Request, key: unknown, totalHits: number): void {
    validations.positiveHits(totalHits);
    // The prefixed key is built only while the check is on (it runs once per limiter).
    if (validations.enabled['singleCount'] ?? validations.enabled['default']) validations.singleCount(req, storeIdentity, `${storePrefix}${String(key)}`, key);
  }

  /** Step 7: `req[requestPropertyName]`, with express-rate-limit's hidden `current`. */
  function publish(req: Request, key: unknown, totalHits: number, limit: number, resetTime: Date | undefined): RateLimitInfo {
    const info: RateLimitInfo = { limit, used: totalHits, remaining: Math.max(limit - totalHits, 0), resetTime, key: key as string };
    return publishInfo(req, requestPropertyName, info, totalHits);
  }

  function count(req: Request, res: Response, next: NextFunction, watch: ResponseWatch | undefined, key: unknown, fail: (error: unknown) => void, done: () => void): void {
    // Whatever the key generator returned is the key, as express-rate-limit uses it: a request without
    // an IP (already reported by the `ip` check) is counted under `undefined`, with every other such request.
    const storeFailed = (error: unknown) => storeFailure(error, next);
    let result: ClientRateLimitInfo | Promise<ClientRateLimitInfo>;
    try {
      result = counter !== undefined ? counter.increment(String(key)) : store.increment(key as string);
    } catch (error) {
      storeFailed(error);
      return;
    }
    if (!isThenable(result)) counted(req, res, next, watch, key, result, fail, done);
    else Promise.resolve(result).then((r) => attemptOr(() => counted(req, res, next, watch, key, r, fail, done), fail), storeFailed);
  }

  function counted(
    req: Request,
    res: Response,
    next: NextFunction,
    watch: ResponseWatch | undefined,
    key: unknown,
    result: ClientRateLimitInfo,
    fail: (error: unknown) => void,
    done: () => void,
  ): void {
    const { totalHits } = result;
    const resetTime = result.resetTime && watch !== undefined ? new Date(result.resetTime.getTime()) : result.resetTime;
    checkHits(req, key, totalHits);
    after(
      outcome.limitOf(req, res),
      (limit) => {
        if (outcome.refuses) validations.limit(limit);
        const limitValue = limit as number;
        const info = publish(req, key, totalHits, limitValue, resetTime);
        const nowMs = config.now();
        const state: CountedState = { limit: limitValue, remaining: info.remaining, resetTime, key: String(key) };
        // A `limit` function's answer whose number is NaN or ±Infinity has no place in a header: this
        // response goes without the ones that carry it (express-rate-limit writes `NaN`, `Infinity`).
        const describable = Number.isFinite(Number(limitValue));
        if (describable && config.legacyHeaders && !res.headersSent) writeLegacyCounterHeaders(res, state, nowMs);
        after(
          describable ? standardHeaders(req, res, state, nowMs) : undefined,
          () => {
            if (watch !== undefined) uncountWhenSkipped(req, res, watch, config, uncounter(key, resetTime));
            if (outcome.refuses && totalHits > limitValue && config.standard.retryAfter) {
              after(
                typeof config.retryAfter === 'function' ? config.retryAfter(req, res) : config.retryAfter,
                (seconds) => {
                  // A `retryAfter` function answering NaN or ±Infinity: the computed seconds instead.
                  const given = typeof seconds === 'number' && !Number.isFinite(seconds) ? undefined : seconds;
                  if (!res.headersSent) res.setHeader('Retry-After', String(given ?? counterRetryAfter(state, config.windowMs, config.now())));
                  outcome.settle({ req, res, next, info, totalHits, done }, fail);
                },
                fail,
              );
              return;
            }
            outcome.settle({ req, res, next, info, totalHits, done }, fail);
          },
          fail,
        );
      },
      fail,
    );
  }

  /** Writes the standard headers; a promise when a draft-8 `identifier` function answers with one. */
  function standardHeaders(req: Request, res: Response, state: CountedState, nowMs: number): void | Promise<void> {
    const { draft, unsupported } = config.standard;
    if (unsupported) {
      if (!res.headersSent) validations.headersDraftVersion(config.public.standardHeaders);
      return;
    }
    if (draft === false || res.headersSent) return;
    if (draft !== 'draft-6') validations.headersResetTime(state.resetTime);
    if (draft === 'draft-6' || draft === 'draft-7') {
      writeStandardCounterHeaders(res, draft, state, config.windowMs, '', nowMs);
      return;
    }
    const name = typeof config.identifier === 'function' ? config.identifier(req, res) : config.identifier;
    // Made a string as express-rate-limit's `"${name}"` does.
    const write = (resolved: unknown) => {
      if (!res.headersSent) writeStandardCounterHeaders(res, draft, state, config.windowMs, String(resolved), nowMs);
    };
    if (isThenable(name)) return Promise.resolve(name).then(write);
    write(name);
  }

  /** Takes a hit back for the skip options, unless the window has already rolled over (express-rate-limit ≥ 8.6). */
  function uncounter(key: unknown, resetTime: Date | undefined) {
    return {
      undo: () => {
        if (resetTime !== undefined && config.now() >= resetTime.getTime()) return undefined;
        return counter !== undefined ? counter.decrement(String(key)) : store.decrement(key as string);
      },
      report: (error: unknown, during: 'decrement' | 'callback' | 'close' | 'error') => logger.error(error, UNCOUNT_MESSAGES[during]),
    };
  }

  /**
   * The general path. `keyed`, from the synchronous path: the key generator has already been called
   * (no skip options are on) and answered with this promise.
   */
  const general = (req: Request, res: Response, next: NextFunction, keyed?: PromiseLike<unknown>): Promise<void> => {
    // The promise express-rate-limit's middleware returns: it settles once the request has been passed
    // on (`next()`, `next(err)`), answered by the handler or (slowDown) held on a timer, and, when the
    // response has already ended by then, once the skip options have taken the hit back. It never rejects.
    const { done, settle, proceed } = settlingNext(next);
    const fail = (error: unknown) => proceed(error);
    let watch: ResponseWatch | undefined;
    try {
      watch = watchResponse(res, config);
      const identify = () => after(keyed !== undefined ? keyed : keyGenerator(req, res), (key) => count(req, res, proceed, watch, key, fail, settle), fail);
      if (config.skip === undefined) identify();
      else after(config.skip(req, res), (skipped) => (skipped ? proceed() : identify()), fail);
    } catch (error) {
      proceed(error);
    }
    return watch === undefined ? done : done.then(() => watch.settled());
  };

  // The synchronous path: the same steps as the general one, inline and without its per-request closures
  // and promise, for rateLimit on the default MemoryStore with a numeric `limit`, no `skip` / skip options,
  // no draft-8 `identifier` function and no `retryAfter` function. A key generator that answers with a
  // promise hands the request to the general path.
  const limit = config.limit;
  const synchronous =
    outcome.refusesOverLimit === true &&
    counter !== undefined &&
    typeof limit === 'number' &&
    config.skip === undefined &&
    !config.skipFailedRequests &&
    !config.skipSuccessfulRequests &&
    typeof config.retryAfter !== 'function' &&
    !(config.standard.draft === 'draft-8' && typeof config.identifier === 'function');

  // Three parameters: Express takes a four-parameter function for an error handler.
  const middleware = !synchronous
    ? (req: Request, res: Response, next: NextFunction): Promise<void> => general(req, res, next)
    : (req: Request, res: Response, next: NextFunction): Promise<void> => {
        try {
          const key = keyGenerator(req, res);
          if (isThenable(key)) return general(req, res, next, key);
          let result: ClientRateLimitInfo;
          try {
            result = counter.increment(String(key));
          } catch (error) {
            storeFailure(error, next);
            return SETTLED;
          }
          const { totalHits, resetTime } = result;
          checkHits(req, key, totalHits);
          validations.limit(limit);
          const { remaining } = publish(req, key, totalHits, limit, resetTime);
          const nowMs = config.now();
          const state: CountedState = { limit, remaining, resetTime, key: String(key) };
          if (config.legacyHeaders && !res.headersSent) writeLegacyCounterHeaders(res, state, nowMs);
          // Synchronous here: no draft-8 `identifier` function.
          void standardHeaders(req, res, state, nowMs);
          // express-rate-limit refuses when `totalHits > limit`: a limit that compares false (NaN) refuses nothing.
          if (!(totalHits > limit)) {
            next();
            return SETTLED;
          }
          if (config.standard.retryAfter && !res.headersSent) {
            res.setHeader('Retry-After', String((config.retryAfter as number | undefined) ?? counterRetryAfter(state, config.windowMs, config.now())));
          }
          // The handler gets a `next` that settles the promise, as on the general path.
          const { done, settle, proceed } = settlingNext(next);
          const handled = config.handler(req, res, proceed, config.public);
          if (isThenable(handled)) Promise.resolve(handled).then(settle, (error: unknown) => proceed(error));
          else settle();
          return done;
        } catch (error) {
          next(error);
          return SETTLED;
        }
      };
  // Anonymous, as express-rate-limit's.
  Object.defineProperty(middleware, 'name', { value: '' });
  return middleware;
}

/** The messages express-rate-limit logs with a failed un-count. */
const UNCOUNT_MESSAGES = {
  decrement: 'express-rate-limit: error from store during decrement.',
  callback: 'express-rate-limit: error in requestWasSuccessful callback.',
  close: 'express-rate-limit: error handling close event during decrement.',
  error: 'express-rate-limit: error handling error event during decrement.',
} as const;

function attemptOr(fn: () => void, fail: (error: unknown) => void): void {
  try {
    fn();
  } catch (error) {
    fail(error);
  }
}

/** The outcome of rateLimit in express-rate-limit mode: over the limit, the handler answers. */
export function refuseOverLimit(config: CounterConfig): Outcome {
  return {
    refuses: true,
    refusesOverLimit: true,
    limitOf: (req, res) => (typeof config.limit === 'function' ? config.limit(req, res) : config.limit),
    settle({ req, res, next, totalHits, info, done }, fail) {
      // express-rate-limit refuses when `totalHits > limit`: a limit that compares false (NaN) refuses nothing.
      if (!(totalHits > info.limit)) {
        next();
        return;
      }
      const result = config.handler(req, res, next, config.public);
      if (isThenable(result)) Promise.resolve(result).then(done, fail);
      else done();
    },
  };
}
