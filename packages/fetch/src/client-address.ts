/**
 * The default key's client address, and the rule that keeps it honest: the
 * address comes from the connection, which a Fetch API `Request` does not
 * carry (Bun gives it with `server.requestIP(req)`, Deno with
 * `info.remoteAddr`, Node servers on their socket), so the caller passes it;
 * or, when the app says its edge is trusted, from the one header that edge
 * sets and overwrites (`ipHeader`: `cf-connecting-ip` behind Cloudflare).
 * A header a client can write is never read otherwise: `X-Forwarded-For` is
 * read only past the proxies `trustProxy` names, right to left, since each
 * proxy appends the address it received the request from and only the
 * right-hand entries are written by proxies of yours. No address: an
 * `ERR_RATEKIT_KEY` error, never a silent fall-back to a spoofable header.
 *
 * @module
 */
import { RateKitError } from '@ratekit/core';

/**
 * The client address as runtimes hand it over: a string, Bun's
 * `SocketAddress` (`server.requestIP(req)`: `{ address }`, or `null` for a
 * Unix socket), or Deno's `Deno.NetAddr` (`info.remoteAddr`: `{ hostname }`).
 */
export type AddressLike = string | { readonly address: string } | { readonly hostname: string } | null | undefined;

/**
 * Which connections are proxies of yours, whose `X-Forwarded-For` entries to
 * believe: `false` (none, the default), a number of hops (`1`: one load
 * balancer in front of the app), or a function of an address and its hop
 * (0 = the connection) returning true for a proxy of yours. As Express's
 * `trust proxy`, but `true` (trust every hop) is refused: any client could
 * then choose its own key.
 */
export type TrustProxy = false | number | ((address: string, hop: number) => boolean);

/** The address in an {@link AddressLike}, or undefined when it holds none. */
export function addressOf(given: AddressLike): string | undefined {
  if (typeof given === 'string') return given === '' ? undefined : given;
  if (given === null || typeof given !== 'object') return undefined;
  const value = 'address' in given ? given.address : 'hostname' in given ? given.hostname : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The client's address in the proxy chain: the connection's `socket`, then
 * `forwardedFor`'s entries right to left; the first one `trustProxy` does
 * not trust, or the leftmost one when it trusts them all.
 *
 * @example
 * ```ts
 * clientAddress('10.0.0.2', '203.0.113.7, 198.51.100.9', 1); // '198.51.100.9'
 * clientAddress('10.0.0.2', '203.0.113.7, 198.51.100.9', 2); // '203.0.113.7'
 * ```
 */
export function clientAddress(socket: string, forwardedFor: string | null, trustProxy: Exclude<TrustProxy, false>): string {
  const chain = [socket];
  if (forwardedFor !== null) {
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

/** The error for a request whose client address is unknown (code `ERR_RATEKIT_KEY`). */
export function missingAddress(where: string): RateKitError {
  return new RateKitError(
    'ERR_RATEKIT_KEY',
    `No client address for the default key: ${where}. Pass it per call (Bun: \`{ ip: server.requestIP(req) }\`, Deno: \`{ ip: info.remoteAddr }\`), set \`ipHeader\` where a trusted edge sets one, or give a \`keyGenerator\``,
  );
}
