import ipaddr from 'ipaddr.js';
import { RateKitOptionError } from './errors.js';

/**
 * Turns a client IP into a rate-limit key. IPv4 addresses are returned as
 * they are; IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) become the IPv4
 * address; other IPv6 addresses become their network in CIDR form, grouped
 * by `ipv6Subnet` bits, because one IPv6 client usually controls a whole
 * /64 or larger and could otherwise rotate addresses to escape the limit.
 *
 * The output matches express-rate-limit's `ipKeyGenerator` (v8), so keys
 * carry over when migrating.
 *
 * @param ip - the client address, e.g. `req.ip` (which honours Express's `trust proxy`)
 * @param ipv6Subnet - prefix length (1–128) to group IPv6 addresses by, or `false` to keep them whole. @default 56
 * @returns the key, e.g. `203.0.113.7` or `2001:db8:1234:5600::/56`
 * @throws {RateKitOptionError} when `ipv6Subnet` is not an integer from 1 to 128 or `false`.
 * @example
 * ```ts
 * ipKeyGenerator('2001:db8:1234:5678::1'); // '2001:db8:1234:5600::/56'
 * ipKeyGenerator('::ffff:192.0.2.1');       // '192.0.2.1'
 * ```
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  assertSubnet(ipv6Subnet);
  // Every IPv6 form contains a colon; anything else (IPv4, or not an address) is returned as is.
  if (!ip.includes(':') || !ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return ip;
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress() || isDottedCompatible(ip)) return v6.toIPv4Address().toString();
  if (ipv6Subnet === false) return ip;
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${v6.toString()}/${ipv6Subnet}`);
  return `${network.toString()}/${ipv6Subnet}`;
}

/** Throws unless `ipv6Subnet` is an integer prefix length from 1 to 128, or `false`. */
export function assertSubnet(ipv6Subnet: unknown, option = 'ipv6Subnet'): asserts ipv6Subnet is number | false {
  if (ipv6Subnet === false) return;
  if (typeof ipv6Subnet !== 'number' || !Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128) {
    throw new RateKitOptionError(option, 'an integer from 1 to 128, or false', ipv6Subnet);
  }
}

/** The deprecated IPv4-compatible form written with a dotted quad, e.g. `::1.2.3.4`. */
function isDottedCompatible(ip: string): boolean {
  return /^::(\d{1,3}\.){3}\d{1,3}$/.test(ip);
}
