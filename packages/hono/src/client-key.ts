/**
 * The default key of ratekit mode: the client's IP address, as the runtime
 * reports it through Hono's `getConnInfo` helper for that runtime, grouped
 * by core's `ipKeyGenerator` (IPv6 by /56 unless `ipv6Subnet` says
 * otherwise), the same key as @ratekit/express, koa and fastify give.
 *
 * The rule, and why it is safe: the address comes from the connection (or,
 * on Cloudflare Workers, from `cf-connecting-ip`, which Cloudflare's edge
 * sets and a client cannot), never from a header a client can write, unless
 * `trustProxy` says the connection is a proxy of ours. Then the chain is the
 * connection's address followed by `X-Forwarded-For` from right to left,
 * and the key is the first address in it that is not a trusted proxy (with
 * a number `n`: the address `n` hops in; core's `clientAddress`). A
 * request whose runtime gives no address fails with `ERR_RATEKIT_KEY`: no
 * silent fall-back to a spoofable header.
 *
 * The middleware cannot import every runtime's helper (each imports its
 * runtime), so the app passes the one for its runtime: `hono/bun`,
 * `hono/deno`, `hono/cloudflare-workers`, `@hono/node-server/conninfo`,
 * `hono/aws-lambda`, `hono/vercel`.
 *
 * @module
 */
import { clientAddress, ipKeyGenerator, RateKitError, type TrustProxy } from '@ratekit/core';
import type { Context } from 'hono';

/** The part of Hono's `ConnInfo` the key needs (`hono/conninfo`'s type). */
export interface ConnInfoLike {
  remote: { address?: string | undefined };
}

/** Hono's `getConnInfo` for a runtime: `import { getConnInfo } from 'hono/bun'`, etc. */
export type GetConnInfo = (c: Context) => ConnInfoLike;

/** Builds the default key function from the resolved options. */
export function clientKeyOf(getConnInfo: GetConnInfo, trustProxy: TrustProxy, ipv6Subnet: number | false): (c: Context) => string {
  return function clientKey(c) {
    const socket = getConnInfo(c).remote.address;
    if (typeof socket !== 'string' || socket === '') {
      throw new RateKitError('ERR_RATEKIT_KEY', 'getConnInfo(c) gave no client address (is it the helper for this runtime?): pass a `keyGenerator` for requests without one');
    }
    const address = trustProxy === false ? socket : clientAddress(socket, c.req.header('x-forwarded-for'), trustProxy);
    return ipKeyGenerator(address, ipv6Subnet);
  };
}
