import { clientAddress } from './proxy-chain';

describe('clientAddress: the connection, then X-Forwarded-For read from the right', () => {
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

  it('never reaches a client-written entry left of the proxies trusted', () => {
    expect(clientAddress('10.0.0.1', '6.6.6.6, 198.51.100.7', 1)).toBe('198.51.100.7');
    expect(clientAddress('10.0.0.1', '6.6.6.6, 198.51.100.7, 10.0.0.2', 2)).toBe('198.51.100.7');
  });

  it('stops at the first address the function does not trust, asking hop by hop', () => {
    expect(clientAddress('10.0.0.2', forwarded, (address) => address.startsWith('10.'))).toBe('198.51.100.7');
    const hops: number[] = [];
    clientAddress('10.0.0.2', forwarded, (_address, hop) => (hops.push(hop), true));
    expect(hops).toEqual([0, 1, 2]);
  });

  it('is the connection when there is no header, or only blank entries', () => {
    expect(clientAddress('10.0.0.2', null, 2)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', undefined, 2)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', ' , ', 2)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.1', '198.51.100.7, ,', 1)).toBe('198.51.100.7');
  });
});
