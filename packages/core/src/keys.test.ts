import { ipKeyGenerator } from './keys';
import { RateKitOptionError } from './errors';

describe('ipKeyGenerator', () => {
  it.each([
    ['203.0.113.7', 56, '203.0.113.7'],
    ['::ffff:1.2.3.4', 56, '1.2.3.4'],
    ['::ffff:102:304', 56, '1.2.3.4'],
    ['::1.2.3.4', 56, '1.2.3.4'],
    ['0123:4567:89ab:cdef:0123:4567:89ab:cdef', 56, '123:4567:89ab:cd00::/56'],
    ['2001:db8:1234:5678::1', 64, '2001:db8:1234:5678::/64'],
    ['::1', 56, '::/56'],
    ['2001:db8::1', 128, '2001:db8::1/128'],
    ['2001:db8::1', false, '2001:db8::1'],
    ['not-an-ip', 56, 'not-an-ip'],
  ] as const)('maps %s with subnet %s to %s', (ip, subnet, expected) => {
    expect(ipKeyGenerator(ip, subnet)).toBe(expected);
  });

  it('groups every address of one /56 under one key', () => {
    expect(ipKeyGenerator('2001:db8:aa:bb01::1')).toBe(ipKeyGenerator('2001:db8:aa:bbff:ffff::9'));
  });

  it.each([0, 129, 1.5, '56'])('rejects ipv6Subnet %p with a coded error', (subnet) => {
    expect(() => ipKeyGenerator('::1', subnet as never)).toThrow(RateKitOptionError);
  });
});
