/**
 * @ratekit/fastify: a Fastify 4 and 5 plugin that rate-limits routes with
 * @ratekit/core, a drop-in for @fastify/rate-limit 11.
 *
 * @module
 */
import './augment.js';
import { fastifyRateLimit } from './plugin.js';

export { fastifyRateLimit };
export default fastifyRateLimit;

export { normalizeIP } from './compat/normalize-ip.js';
export type { ErrorResponseBuilderContext as errorResponseBuilderContext } from './compat/options.js';
export type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor, StoreCallback, StoreChildOptions, StoreResult } from './compat/store-contract.js';
export { EARLY_ROUTES_WARNING } from './early-routes.js';
export { parseTimeWindow } from './compat/duration.js';
export type { RateLimitError } from './refusal.js';
export type {
  AllowListedResult,
  CheckOptions,
  CheckResult,
  CreateRateLimitOptions,
  ErrorResponseBuilderContext,
  LimitedResult,
  RateLimitChecker,
  RateLimitHeaderName,
  RateLimitHook,
  RateLimitHookHandler,
  RateLimitOptions,
  RateLimitPluginOptions,
  ValueOrPromise,
} from './types.js';
