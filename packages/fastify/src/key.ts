import { ipKeyGenerator, RateKitError } from '@ratekit/core';
import type { FastifyRequest } from 'fastify';
import type { ValueOrPromise } from './types.js';

/** Turns a request into its key; `undefined` only from the default generator, for a request without an IP. */
export type KeyFunction = (request: FastifyRequest) => ValueOrPromise<string | number | undefined>;

/**
 * The default key: the client IP from `request.ip`, which honours Fastify's
 * `trustProxy` option (this never reads `X-Forwarded-For` itself), with
 * IPv6 addresses grouped by `ipv6Subnet` through core's `ipKeyGenerator`.
 *
 * A request without an IP (the socket closed early, an unusual server) is
 * let through unlimited and reported once per limiter through `report`:
 * failing open keeps the app serving, the report makes the gap visible.
 */
export function defaultKeyGenerator(ipv6Subnet: number | false, report: (message: string) => void): KeyFunction {
  let reported = false;
  return function clientIp(request) {
    const ip = request.ip;
    if (typeof ip === 'string' && ip.length > 0) return ipKeyGenerator(ip, ipv6Subnet);
    if (!reported) {
      reported = true;
      report(
        '[ratekit] `request.ip` is undefined, so @ratekit/fastify let the request through without limiting it. ' +
          'Pass a `keyGenerator` that returns a key for such requests. (Reported once per limiter.)',
      );
    }
    return undefined;
  };
}

/**
 * The error for a `keyGenerator` that threw, rejected or returned no usable
 * key (code `ERR_RATEKIT_KEY`). It carries no `statusCode`, so Fastify
 * answers 500 through the app's error handler; other requests are unaffected.
 */
export function keyError(problem: { threw: unknown } | { returned: unknown }): RateKitError {
  if ('threw' in problem) {
    const reason = problem.threw instanceof Error ? problem.threw.message : String(problem.threw);
    return new RateKitError('ERR_RATEKIT_KEY', `The keyGenerator failed: ${reason}`, { cause: problem.threw });
  }
  return new RateKitError('ERR_RATEKIT_KEY', `Expected the keyGenerator to return a non-empty string or a finite number, got ${describe(problem.returned)}`);
}

/**
 * Checks a generated key: a non-empty string, or a finite number (made a
 * string, so `42` and `'42'` are the same client).
 *
 * @returns the key, or undefined when it is unusable
 */
export function usableKey(key: unknown): string | undefined {
  if (typeof key === 'string') return key.length > 0 ? key : undefined;
  if (typeof key === 'number' && Number.isFinite(key)) return String(key);
  return undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
