/**
 * The default key's client address. It comes from the connection, which a `Request` does not carry,
 * so the caller passes it (`RateLimitCall.ip`), or, behind a trusted edge, from the one header that
 * edge overwrites (`ipHeader`). A header a client can write is never read otherwise (`X-Forwarded-For`
 * only past the proxies `trustProxy` names), and no address is an `ERR_RATEKIT_KEY` error.
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
