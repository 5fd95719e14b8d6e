/**
 * The options of {@link rateLimit}: core's ratekit-mode options (`GateOptions`, documented and
 * checked there, when the function is built), and the one the Fetch API adds, `ipHeader`.
 *
 * @module
 */
import { type GateOptions, RateKitOptionError } from '@ratekit/core';

/** Options of {@link rateLimit}: every `GateOptions` of @ratekit/core, over the `Request`, and `ipHeader`. */
export interface RateLimitOptions extends GateOptions<Request, Response> {
  /**
   * A header your edge sets to the client's address, overwriting whatever the client sent, read
   * by the default key instead of the address given per call: `'cf-connecting-ip'` on Cloudflare
   * Workers, `'x-real-ip'` on Vercel, `'fly-client-ip'` on Fly.io. Only set it when every request
   * comes through that edge: anyone who reaches the app directly chooses their own key with it. A
   * request without the header fails with `ERR_RATEKIT_KEY`.
   */
  ipHeader?: string;
}

/** Names other limiters use, for the error's hint: ours, or (`nothing: …`) why there is none. */
export const RENAMED: Readonly<Record<string, string>> = {
  requestPropertyName: 'nothing: the decision is in the result, `result.decision`',
  skipFailedRequests: 'nothing: the function does not see the response; call `limit.limiter.refund(result.key)` when it fails',
  skipSuccessfulRequests: 'nothing: the function does not see the response; call `limit.limiter.refund(result.key)` when it succeeds',
};

/** An HTTP field name (RFC 9110 `token`). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `ipHeader`, checked, lower-cased; refused beside `trustProxy` or `keyGenerator`, which it would contradict.
 * @throws {RateKitOptionError} naming the option
 */
export function resolveIpHeader(options: RateLimitOptions): string | undefined {
  const { ipHeader } = options;
  if (ipHeader === undefined) return undefined;
  if (typeof ipHeader !== 'string' || !FIELD_NAME.test(ipHeader)) throw new RateKitOptionError('ipHeader', "a header name your edge sets, such as 'cf-connecting-ip'", ipHeader);
  if (options.trustProxy !== undefined) throw new RateKitOptionError('trustProxy', 'unset when `ipHeader` is given (the edge header already names the client)', options.trustProxy);
  if (options.keyGenerator !== undefined) throw new RateKitOptionError('ipHeader', 'unset when `keyGenerator` is given (it shapes the default key only)', ipHeader);
  return ipHeader.toLowerCase();
}
