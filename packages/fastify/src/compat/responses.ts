import { format } from '@lukeed/ms';
import type { FastifyReply } from 'fastify';
import { stacklessRefusal } from '../refusal.js';
import type { CompatParams, ErrorResponseBuilderContext } from './options.js';

/** A refusal's state, as the headers and the error response need it. */
export interface Exceeded {
  readonly max: number;
  readonly remaining: number;
  readonly ttl: number;
  readonly ttlInSeconds: number;
}

/**
 * @fastify/rate-limit 11's headers on an admitted response: limit, remaining
 * and reset (whole seconds until the window ends), each unless switched off
 * in `addHeadersOnExceeding`.
 */
export function writePassHeaders(reply: FastifyReply, params: CompatParams, state: Exceeded): void {
  const { labels, addHeadersOnExceeding: on } = params;
  if (on[labels.rateLimit]) reply.header(labels.rateLimit, state.max);
  if (on[labels.rateRemaining]) reply.header(labels.rateRemaining, state.remaining);
  if (on[labels.rateReset]) reply.header(labels.rateReset, state.ttlInSeconds);
}

/**
 * Its headers on a refusal: limit, remaining 0, reset and `retry-after`
 * (whole seconds until the window ends), each unless switched off in
 * `addHeaders`. `retry-after` is at least 1: a `0` sends the client straight
 * back into another refusal (RFC 9110 §10.2.3 gives a delay to wait; the
 * one deliberate difference from upstream here, which can send 0 when a
 * store answers a spent window).
 */
export function writeRefusalHeaders(reply: FastifyReply, params: CompatParams, state: Exceeded): void {
  const { labels, addHeaders: on } = params;
  if (on[labels.rateLimit]) reply.header(labels.rateLimit, state.max);
  if (on[labels.rateRemaining]) reply.header(labels.rateRemaining, 0);
  if (on[labels.rateReset]) reply.header(labels.rateReset, state.ttlInSeconds);
  if (on[labels.retryAfter]) reply.header(labels.retryAfter, Math.max(1, state.ttlInSeconds));
}

/** The context `errorResponseBuilder` receives, field for field as upstream builds it. */
export function errorContext(state: Exceeded, banned: boolean): ErrorResponseBuilderContext {
  return { statusCode: banned ? 403 : 429, ban: banned, max: state.max, ttl: state.ttl, after: afterText(state.ttlInSeconds) };
}

// `after` for the last `ttlInSeconds` formatted: it changes once a second, not once a refusal.
let afterSeconds = Number.NaN;
let afterFormatted = '';

/** `format(seconds * 1000, true)` (`@lukeed/ms` long format, e.g. `1 minute`), cached for the last value. */
function afterText(seconds: number): string {
  if (seconds !== afterSeconds) {
    afterFormatted = format(seconds * 1000, true);
    afterSeconds = seconds;
  }
  return afterFormatted;
}

/**
 * @fastify/rate-limit 11's default refusal: an `Error` whose message is
 * `Rate limit exceeded, retry in <after>` and whose `statusCode` (429, or
 * 403 for a ban) Fastify's error handling answers with, so the body is
 * `{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded, retry in 1 minute"}`.
 *
 * Built without capturing a stack trace (`stacklessRefusal`, as ratekit mode's):
 * a 429 is an answer, not a fault, and the capture was the largest single
 * cost of a refusal under load. `stack` is then just `Error: <message>`
 * (upstream's frames are the plugin's and Fastify's hook runner's).
 */
export function defaultErrorResponse(context: ErrorResponseBuilderContext): Error & { statusCode: number } {
  return stacklessRefusal(`Rate limit exceeded, retry in ${context.after}`, context.statusCode);
}
