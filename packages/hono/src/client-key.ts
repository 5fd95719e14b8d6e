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
 * a number `n`: the address `n` hops in; each proxy appends the address it
 * received the request from, so only the right-hand entries are ours). A
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
import { ipKeyGenerator, RateKitError } from '@ratekit/core';
import type { Context } from 'hono';

/** The part of Hono's `ConnInfo` the key needs (`hono/conninfo`'s type). */
export interface ConnInfoLike {
  remote: { address?: string | undefined };
}

/** Hono's `getConnInfo` for a runtime: `import { getConnInfo } from 'hono/bun'`, etc. */
export type GetConnInfo = (c: Context) => ConnInfoLike;

/**
 * Which connections are proxies whose `X-Forwarded-For` entries to believe:
 * `false` (none, the default), a number of hops (`1`: one proxy, e.g. a
 * load balancer, in front of the app), or a function of an address and its
 * position in the chain (0 = the connection) returning true for a proxy of
 * yours. `true` is refused: trusting every hop lets any client pick its key.
 */
export type TrustProxy = false | number | ((address: string, hop: number) => boolean);

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

/**
 * The client's address in the proxy chain: the connection's `socket`, then
 * `forwardedFor`'s entries right to left; the first one `trustProxy` does
 * not trust, or the last one. Pure; exported for its test.
 */
export function clientAddress(socket: string, forwardedFor: string | undefined, trustProxy: Exclude<TrustProxy, false>): string {
  const chain = [socket];
  if (forwardedFor !== undefined) {
    const entries = forwardedFor.split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!.trim();
      if (entry !== '') chain.push(entry);
    }
  }
  const trusted = typeof trustProxy === 'number' ? (_: string, hop: number) => hop < trustProxy : trustProxy;
  let hop = 0;
  while (hop < chain.length - 1 && trusted(chain[hop]!, hop)) hop++;
  return chain[hop]!;
}
