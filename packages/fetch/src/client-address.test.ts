import { addressOf, clientAddress } from './client-address';

describe('addressOf: the address as each runtime hands it over', () => {
  it.each([
    ['a string', '203.0.113.7', '203.0.113.7'],
    ['Bun’s SocketAddress', { address: '2001:db8::1', family: 'IPv6', port: 443 }, '2001:db8::1'],
    ['Deno’s NetAddr', { hostname: '192.0.2.1', port: 8000, transport: 'tcp' }, '192.0.2.1'],
    ['null (Bun, a Unix socket)', null, undefined],
    ['undefined', undefined, undefined],
    ['an empty string', '', undefined],
    ['an object without an address', { path: '/tmp/socket' }, undefined],
  ])('%s', (_name, given, expected) => {
    expect(addressOf(given as Parameters<typeof addressOf>[0])).toBe(expected);
  });
});

describe('clientAddress: the chain of the connection and X-Forwarded-For, read from the right', () => {
  const forwarded = '192.0.2.1, 198.51.100.7 , 10.0.0.9';
  it.each([
    [0, '10.0.0.2'], // the connection itself
    [1, '10.0.0.9'],
    [2, '198.51.100.7'],
    [3, '192.0.2.1'],
    [9, '192.0.2.1'], // trusting more hops than there are stops at the leftmost entry
  ])('trustProxy %i → %s', (hops, expected) => {
    expect(clientAddress('10.0.0.2', forwarded, hops)).toBe(expected);
  });

  it('stops at the first address the function does not trust', () => {
    expect(clientAddress('10.0.0.2', forwarded, (address) => address.startsWith('10.'))).toBe('198.51.100.7');
    const hops: number[] = [];
    clientAddress('10.0.0.2', forwarded, (_address, hop) => (hops.push(hop), true));
    expect(hops).toEqual([0, 1, 2]);
  });

  it('is the connection when there is no header, or only empty entries', () => {
    expect(clientAddress('10.0.0.2', null, 2)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', ' , ', 2)).toBe('10.0.0.2');
  });
});
