import fc from 'fast-check';
import { normalizeIP, normalizeIPv6Subnet } from './normalize-ip.js';

// Loaded untyped: its type declarations augment Fastify's and would clash with this package's.
const { normalizeIP: upstreamNormalizeIP } = require('@fastify/rate-limit') as { normalizeIP: (ip: string, subnet?: number) => string };

describe('normalizeIP: the keys @fastify/rate-limit 11 counts under', () => {
  it.each([
    ['127.0.0.1', 64, '127.0.0.1'],
    ['ABCD::1', 128, 'abcd::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', 128, '2001:db8::1'],
    ['2001:db8:0:1:1:1:1:1', 64, '2001:db8:0:1::'],
    ['2001:db8:0:1:1:1:1:1', 56, '2001:db8::'],
    ['::ffff:1.2.3.4', 64, '1.2.3.4'],
    ['fe80::1%eth0', 128, 'fe80::1'],
    ['1:0:0:1:0:0:0:1', 128, '1:0:0:1::1'],
    ['2001:db8::1', 0, '::'],
  ])('%s /%i → %s', (ip, subnet, expected) => {
    expect(normalizeIP(ip, subnet)).toBe(expected);
  });

  it('agrees with upstream on any IPv6 address and prefix', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 0, max: 128 }), (ip, subnet) => {
        expect(normalizeIP(ip, subnet)).toBe(upstreamNormalizeIP(ip, subnet));
      }),
    );
  });

  it('reads ipv6Subnet as upstream: a finite 0–128 truncated, anything else 64', () => {
    expect([48.9, 0, 128, -1, 129, Number.NaN, '56', undefined].map(normalizeIPv6Subnet)).toEqual([48, 0, 128, 64, 64, 64, 64, 64]);
  });
});
