// The example's two policies, the same as the other examples' (examples/express-api): reads on a
// token bucket, writes on a sliding window.
import { seconds, type ThrottlerMethodOrControllerOptions, type ThrottlerOptions } from '@ratekit/nestjs';

/**
 * Reads: the module's only throttler, a token bucket holding 20 requests, refilled at 10 per
 * second. It applies to every route that does not set its own. Named `default` (by leaving the
 * name out), so its headers are the plain `X-RateLimit-*` and `Retry-After` ones, with no
 * `-<name>` suffix.
 */
export const READ_POLICY: ThrottlerOptions = { ttl: seconds(1), limit: 10, algorithm: 'token-bucket', burst: 20 };

/**
 * Writes: at most 5 per 10 seconds, counted over a sliding window (set on `POST /items` with
 * `@Throttle({ default: WRITE_POLICY })`, in place of the read policy). It names its own algorithm,
 * so it does not inherit the read policy's `burst`.
 */
export const WRITE_POLICY: ThrottlerMethodOrControllerOptions = { ttl: seconds(10), limit: 5, algorithm: 'sliding-window' };

/** The body of a refused write: `{"statusCode":429,"message":"Too many writes, please slow down."}`. */
export const WRITE_REFUSED_MESSAGE = 'Too many writes, please slow down.';
