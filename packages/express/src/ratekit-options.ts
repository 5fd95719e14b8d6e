/**
 * ratekit mode's options: the rule that selects it, and how Express's options become core's
 * `GateOptions` (documented and checked there, when the middleware is built). Express adds
 * `requestPropertyName`, the refund options and `logger`; its `(req, res)` functions are handed
 * the request the gate passes (Express sets `req.res`); express-rate-limit's header defaults stay
 * (legacy on, standard off).
 *
 * @module
 */
import { type GateOptions, RateKitOptionError, resolveRefundOptions } from '@ratekit/core';
import type { Request } from 'express';
import { isRateKitStore } from './is-ratekit-store.js';
import type { SkipRequestsSettings } from './skip-requests.js';
import type { RateLimitOptions, ValueDeterminingMiddleware } from './types.js';

/** Options only ratekit mode has: any of them, or a ratekit store as `store`, selects it. */
export const RATEKIT_OPTIONS = ['algorithm', 'limits', 'cost', 'prefix', 'onStoreError', 'storeTimeoutMs', 'onError', 'refusalCache'] as const;

/** True when the options select ratekit mode. */
export function selectsRateKit(options: unknown): boolean {
  if (typeof options !== 'object' || options === null) return false;
  const given = options as Record<string, unknown>;
  return RATEKIT_OPTIONS.some((name) => given[name] !== undefined) || isRateKitStore(given['store']);
}

/** express-rate-limit's options ratekit mode has no use for, and what to use instead. */
export const RENAMED: Readonly<Record<string, string>> = {
  identifier: 'nothing: name each limit instead, `limits: { limit, windowMs, name }`',
  retryAfter: 'nothing: Retry-After is when the limiter admits the request again',
  passOnStoreError: "nothing: use `onStoreError: 'allow'`",
  validate: 'nothing: ratekit mode checks its options when it is built, and throws',
};

/** What ratekit mode adds to the gate, resolved. */
export interface ExpressSettings extends SkipRequestsSettings {
  readonly requestPropertyName: string;
}

/**
 * Splits the options into the gate's and Express's, checking Express's.
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option
 */
export function resolveRateKitOptions(options: RateLimitOptions): { gate: GateOptions<Request>; express: ExpressSettings } {
  const { requestPropertyName, skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful, logger, keyGenerator, skip, message, ...shared } = options;
  const refunds = resolveRefundOptions({ requestPropertyName, skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input
  if (logger !== undefined && typeof logger?.error !== 'function') throw new RateKitOptionError('logger', 'an object with an `error` function', logger);
  const { trustProxy } = options as { trustProxy?: unknown };
  if (trustProxy !== undefined) throw new RateKitOptionError('trustProxy', "unset: the key reads req.ip, so Express's `trust proxy` setting applies", trustProxy);
  const gate = {
    ...shared,
    legacyHeaders: options.legacyHeaders ?? true,
    onError: options.onError ?? (logger === undefined ? undefined : (error: unknown) => logger.error(error)),
    keyGenerator: withResponse(keyGenerator),
    skip: withResponse(skip),
    message: withResponse(message),
  } as GateOptions<Request>;
  return { gate, express: { ...refunds, requestWasSuccessful: refunds.requestWasSuccessful ?? succeeded } };
}

/** express-rate-limit's default: a status below 400. */
const succeeded: ValueDeterminingMiddleware<boolean> = (_req, res) => res.statusCode < 400;

/** A user's `(req, res)` function as a function of the request; anything else as given, for the gate to check. */
function withResponse<T>(fn: T): T {
  return (typeof fn === 'function' ? (req: Request) => (fn as ValueDeterminingMiddleware<unknown>)(req, req.res!) : fn) as T;
}
