import { isIPv6 } from 'node:net';
import { ipKeyGenerator } from '@ratekit/core';
import { isThenable } from '../maybe.js';
import type { KeyFunction } from './common-config.js';
import type { ValueDeterminingMiddleware } from '../types.js';
import type { Validations } from './validations.js';

/**
 * The default key, as express-rate-limit v8 makes it: the client IP from
 * `req.ip` (which honours Express's `trust proxy` setting; `X-Forwarded-For`
 * is never read here), with IPv6 addresses grouped by `ipv6Subnet` through
 * `ipKeyGenerator`. First it runs the `ip`, `trustProxy`,
 * `xForwardedForHeader` and `forwardedHeader` checks (each logged once);
 * a function `ipv6Subnet` is called for IPv6 clients only, and its result
 * checked too.
 *
 * When `req.ip` is missing (the socket closed early, or a server that is not
 * a plain Node HTTP server) it returns `undefined`, and the `ip` check logs
 * `ERR_ERL_UNDEFINED_IP_ADDRESS` once. The middleware then counts the
 * request under that `undefined` key, as express-rate-limit does (all such
 * requests share it). (ratekit mode's key is core's gate's, not this.)
 */
export function defaultKeyGenerator(ipv6Subnet: number | false | ValueDeterminingMiddleware<number>, validations: Validations): KeyFunction {
  return function clientIp(req, res) {
    // Read once: Express 5's `req.ip` getter runs proxy-addr on every access.
    const ip = req.ip;
    validations.ip(ip);
    validations.trustProxy(req);
    validations.xForwardedForHeader(req);
    validations.forwardedHeader(req);
    if (typeof ip !== 'string' || ip.length === 0) return undefined;
    // No colon: not IPv6, and ipKeyGenerator returns it as is (skips isIPv6 and the call).
    if (!ip.includes(':')) return ip;
    // As express-rate-limit: `ipv6Subnet` (a value or a function) applies to IPv6 clients only.
    if (!isIPv6(ip)) return ipKeyGenerator(ip, 56);
    if (typeof ipv6Subnet !== 'function') return ipKeyGenerator(ip, ipv6Subnet);
    const subnet = ipv6Subnet(req, res);
    const keyOf = (resolved: number) => {
      validations.ipv6Subnet(resolved);
      return ipKeyGenerator(ip, resolved);
    };
    return isThenable(subnet) ? Promise.resolve(subnet).then(keyOf) : keyOf(subnet);
  };
}
