import { addressOf } from './client-address';

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
