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

/** The address in an {@link AddressLike}, or undefined when it holds none. */
export function addressOf(given: AddressLike): string | undefined {
  if (typeof given === 'string') return given === '' ? undefined : given;
  if (given === null || typeof given !== 'object') return undefined;
  const value = 'address' in given ? given.address : 'hostname' in given ? given.hostname : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The error for a request whose client address is unknown (code `ERR_RATEKIT_KEY`). */
export function missingAddress(where: string): RateKitError {
  return new RateKitError(
    'ERR_RATEKIT_KEY',
    `No client address for the default key: ${where}. Pass it per call (Bun: \`{ ip: server.requestIP(req) }\`, Deno: \`{ ip: info.remoteAddr }\`), set \`ipHeader\` where a trusted edge sets one, or give a \`keyGenerator\``,
  );
}
