/**
 * The options express-rate-limit gives its family of limiters, which hono-rate-limiter copies and
 * ratekit's Express and Hono adapters take in ratekit mode: where the decision goes on the request
 * (`requestPropertyName`), and which responses give their cost back (`skipFailedRequests`,
 * `skipSuccessfulRequests`, `requestWasSuccessful`). Each adapter watches the response in its own
 * framework's way; the names, defaults and checks are here, once.
 *
 * @module
 */
import { RateKitOptionError } from '../errors.js';
import { assertFunction } from '../validate.js';

/** The options as a user gives them; `F` is the framework's `requestWasSuccessful` function. */
export interface RefundOptionsInput<F> {
  requestPropertyName?: string;
  skipFailedRequests?: boolean;
  skipSuccessfulRequests?: boolean;
  requestWasSuccessful?: F;
}

/** The options checked, with express-rate-limit's defaults. */
export interface RefundOptions<F> {
  /** Where the decision goes on the request or context. @default 'rateLimit' */
  readonly requestPropertyName: string;
  /** @default false */
  readonly skipFailedRequests: boolean;
  /** @default false */
  readonly skipSuccessfulRequests: boolean;
  /** Undefined when not given: the adapter's default (a status below 400) applies. */
  readonly requestWasSuccessful: F | undefined;
}

/**
 * Checks express-rate-limit's response options and fills in its defaults.
 *
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option: `requestPropertyName`
 *   when it is not a non-empty string, a skip option that is not a boolean, a `requestWasSuccessful` that is not a function
 * @see https://github.com/express-rate-limit/express-rate-limit, its documented options (`requestPropertyName`, `skipFailedRequests`, `skipSuccessfulRequests`, `requestWasSuccessful`)
 * @example
 * ```ts
 * const { skipFailedRequests, requestPropertyName } = resolveRefundOptions(options); // false, 'rateLimit'
 * ```
 */
export function resolveRefundOptions<F>(options: RefundOptionsInput<F>): RefundOptions<F> {
  const { requestPropertyName = 'rateLimit', skipFailedRequests = false, skipSuccessfulRequests = false, requestWasSuccessful } = options;
  if (typeof requestPropertyName !== 'string' || requestPropertyName === '') throw new RateKitOptionError('requestPropertyName', 'a non-empty string', requestPropertyName);
  for (const [name, value] of [['skipFailedRequests', skipFailedRequests] as const, ['skipSuccessfulRequests', skipSuccessfulRequests] as const]) {
    if (typeof value !== 'boolean') throw new RateKitOptionError(name, 'a boolean', value);
  }
  if (requestWasSuccessful !== undefined) assertFunction('requestWasSuccessful', requestWasSuccessful);
  return { requestPropertyName, skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful };
}
