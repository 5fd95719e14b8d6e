import { clientAddress } from './client-key.js';

describe('clientAddress (the trusted-proxy rule)', () => {
  // The chain: the connection, then X-Forwarded-For right to left.
  it.each([
    ['no header: the connection', '10.0.0.1', undefined, 1, '10.0.0.1'],
    ['one trusted hop: the address that proxy received from', '10.0.0.1', '198.51.100.7', 1, '198.51.100.7'],
    ['a client-written entry left of ours is never reached', '10.0.0.1', '6.6.6.6, 198.51.100.7', 1, '198.51.100.7'],
    ['two hops', '10.0.0.1', '6.6.6.6, 198.51.100.7, 10.0.0.2', 2, '198.51.100.7'],
    ['more hops trusted than the chain has: the leftmost', '10.0.0.1', '198.51.100.7', 5, '198.51.100.7'],
    ['zero hops: the connection', '10.0.0.1', '198.51.100.7', 0, '10.0.0.1'],
    ['blank entries are skipped', '10.0.0.1', '198.51.100.7, ,', 1, '198.51.100.7'],
  ])('%s', (_title, socket, forwardedFor, hops, expected) => {
    expect(clientAddress(socket, forwardedFor, hops)).toBe(expected);
  });

  it('walks past every address the trust function accepts', () => {
    const ours = (address: string) => address.startsWith('10.');
    expect(clientAddress('10.0.0.1', '6.6.6.6, 198.51.100.7, 10.0.0.3, 10.0.0.2', ours)).toBe('198.51.100.7');
  });
});
