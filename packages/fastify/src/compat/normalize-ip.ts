import { isIPv6 } from 'node:net';
import { Address6 } from 'ip-address';

/** @fastify/rate-limit 11's default `ipv6Subnet`: IPv6 clients are counted per /64. */
export const DEFAULT_IPV6_SUBNET = 64;

/**
 * A client IP as @fastify/rate-limit 11's default key: an IPv4 address (or
 * anything that is not IPv6) lower-cased as given; an IPv4-mapped IPv6
 * address as its IPv4 form; any other IPv6 address as the first address of
 * its `/ipv6Subnet` network in its canonical form (`2001:db8::`).
 *
 * The same strings as upstream's exported `normalizeIP` (both parse with
 * `ip-address`), so that counts kept in a shared store under upstream's keys
 * carry over unchanged.
 *
 * @param ip - the client address, e.g. `request.ip`
 * @param ipv6Subnet - prefix length, 0–128 (128 keeps the whole address)
 * @throws {Error} from `ip-address` when `ip` passes `net.isIPv6` but `ip-address` cannot parse it
 * @example `normalizeIP('2001:db8::1:2:3:4') // '2001:db8::'`
 */
export function normalizeIP(ip: string, ipv6Subnet: number = DEFAULT_IPV6_SUBNET): string {
  // Every IPv6 address has a colon: an IPv4 address skips isIPv6's regular expression.
  if (!ip.includes(':') || !isIPv6(ip)) return ip.toLowerCase();
  const address = new Address6(ip);
  if (address.isMapped4()) return address.to4().correctForm();
  if (ipv6Subnet >= 128) return address.correctForm();
  return new Address6(`${ip}/${ipv6Subnet}`).startAddress().correctForm();
}

/** An `ipv6Subnet` option as @fastify/rate-limit reads it: a finite 0–128 (truncated), else the default. */
export function normalizeIPv6Subnet(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 128 ? Math.trunc(value) : DEFAULT_IPV6_SUBNET;
}
