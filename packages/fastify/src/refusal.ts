import { format } from '@lukeed/ms';
import { type Decision, DEFAULT_REFUSAL_MESSAGE, RateKitOptionError, retryAfterSeconds } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import type { ErrorResponseBuilderContext } from './types.js';

/**
 * The default refusal: an `Error` whose `statusCode` Fastify's error
 * handling uses. It carries no stack trace (`stack` is `Error: <message>`):
 * a refusal is an answer, not a fault, and capturing the stack doubled the
 * cost of a 429.
 */
export interface RateLimitError extends Error {
  statusCode: 429 | 403;
}

/**
 * Builds what a refusal throws: `errorResponseBuilder`'s result, or an
 * `Error` with `statusCode` 429 (403 for a ban) and core's
 * `DEFAULT_REFUSAL_MESSAGE`, so the three adapters answer with the same
 * message. It goes to Fastify's error handling (the app's `setErrorHandler`,
 * or Fastify's default, which sends
 * `{"statusCode":429,"error":"Too Many Requests","message":"…"}`).
 *
 * A builder result without a numeric `statusCode` gets 429/403: set on an
 * `Error`, on a copy of a plain object. @fastify/rate-limit 11 answers 500
 * there.
 *
 * @throws {RateKitOptionError} when the builder returns something other than an object
 */
export function refusalError(
  request: FastifyRequest,
  key: string,
  decision: Decision,
  banned: boolean,
  build: ((request: FastifyRequest, context: ErrorResponseBuilderContext) => object) | undefined,
): object {
  const statusCode = banned ? 403 : 429;
  if (build === undefined) return stacklessRefusal(DEFAULT_REFUSAL_MESSAGE, statusCode);
  const seconds = retryAfterSeconds(decision);
  const context: ErrorResponseBuilderContext = {
    statusCode,
    ban: banned,
    max: decision.limit,
    ttl: seconds * 1000,
    after: format(seconds * 1000, true),
    key,
    decision,
  };
  const built: unknown = build(request, context);
  if (typeof built !== 'object' || built === null) throw new RateKitOptionError('errorResponseBuilder(request, context)', 'to return an Error or an object', built);
  if (typeof (built as { statusCode?: unknown }).statusCode === 'number') return built;
  if (built instanceof Error) return Object.assign(built, { statusCode });
  return { ...built, statusCode };
}

/**
 * A refusal `Error` with `statusCode`, built without capturing a stack trace: a 429 is an answer,
 * not a fault, and capturing the stack was the largest cost of a refusal under load. `stack` is
 * then just `Error: <message>`. Both modes throw their default refusal through it.
 */
export function stacklessRefusal<S extends number>(message: string, statusCode: S): Error & { statusCode: S } {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new Error(message) as Error & { statusCode: S };
  Error.stackTraceLimit = stackTraceLimit;
  error.statusCode = statusCode;
  return error;
}
