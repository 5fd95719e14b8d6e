/**
 * What express-rate-limit mode and slowDown resolve from the options and use
 * per request: the common configuration (`CommonConfig`, with how the
 * standard headers are sent and the key function) and which middleware the
 * options are for (`Flavour`). The options are resolved in options.ts, with
 * express-rate-limit's defaults and checks.
 *
 * @module
 */
import type { StandardHeaders } from '@ratekit/core';
import type { Request, Response } from 'express';
import type { Validations } from './validations.js';
import type { Logger, Options, RateLimitExceededEventHandler, RateLimitMode, ResolvedRateLimitOptions, ValueDeterminingMiddleware, ValueOrPromise } from '../types.js';

/** Turns a request into its key. The default generator returns `undefined` when the request has no IP. */
export type KeyFunction = (req: Request, res: Response) => ValueOrPromise<unknown>;

/** How the standard headers are to be sent. */
export interface StandardHeaderSetting {
  /** The draft to write, `false` for none (and for an unsupported value). */
  readonly draft: StandardHeaders;
  /** The value was a string express-rate-limit does not know: report `ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION` once. */
  readonly unsupported: boolean;
  /** A refusal carries `Retry-After`: legacy or standard headers (even an unsupported value) are on. */
  readonly retryAfter: boolean;
}

/** What express-rate-limit mode and slowDown need per request, resolved once. */
export interface CommonConfig {
  readonly mode: RateLimitMode;
  /** What `handler` (and `Store.init`) receive. */
  readonly public: ResolvedRateLimitOptions;
  /** express-rate-limit's configuration checks, built in validations.ts. */
  readonly validations: Validations;
  readonly logger: Logger;
  readonly now: () => number;
  readonly windowMs: number;
  readonly skip: ValueDeterminingMiddleware<boolean> | undefined;
  readonly keyGenerator: KeyFunction;
  /** True when `keyGenerator` was given: its bad results are errors, not pass-throughs. */
  readonly customKey: boolean;
  readonly handler: RateLimitExceededEventHandler;
  readonly identifier: string | ValueDeterminingMiddleware<string>;
  readonly retryAfter: number | ValueDeterminingMiddleware<number> | undefined;
  readonly legacyHeaders: boolean;
  readonly standard: StandardHeaderSetting;
  readonly requestPropertyName: string;
  readonly skipFailedRequests: boolean;
  readonly skipSuccessfulRequests: boolean;
  readonly requestWasSuccessful: ValueDeterminingMiddleware<boolean>;
}

/** Which middleware the options are for: slowDown has its own defaults and extra options. */
export interface Flavour {
  readonly name: 'rateLimit' | 'slowDown';
  /** Defaults applied under the user's options. */
  readonly defaults: Partial<Options>;
  /** Further names `validate` may hold. */
  readonly extraValidations: readonly string[];
  /** Options this flavour resolves itself (left out of the checks here). */
  readonly ownOptions: readonly string[];
}
