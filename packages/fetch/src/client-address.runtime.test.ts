// The default key: the client address, given per call or by a trusted edge, never guessed.
// Written against the runtime matrix's subset of jest, so it runs on Node (jest), Bun, Deno and workerd alike.
import { rateLimit } from '@ratekit/fetch';
import { CLIENT, get, T0, testClock } from './test-support.js';

describe('rateLimit: the key', () => {
  const clock = testClock();
  const now = clock.now;
  beforeEach(() => {
    clock.t = T0;
  });

  describe('the key: the client address', () => {
    it('takes a string, Bun’s server.requestIP(req) or Deno’s info.remoteAddr', async () => {
      const limit = rateLimit({ limit: 5, now });
      expect((await limit(get(), { ip: CLIENT })).key).toBe(CLIENT);
      expect((await limit(get(), { ip: { address: '198.51.100.1', family: 'IPv4', port: 51234 } as { address: string } })).key).toBe('198.51.100.1');
      expect((await limit(get(), { ip: { hostname: '192.0.2.1', port: 51234, transport: 'tcp' } as { hostname: string } })).key).toBe('192.0.2.1');
    });

    it('groups IPv6 clients by /56, so one client cannot rotate addresses past the limit', async () => {
      const limit = rateLimit({ limit: 2, now });
      const first = await limit(get(), { ip: '2001:db8:1234:5600::1' });
      expect(first.key).toBe('2001:db8:1234:5600::/56');
      await limit(get(), { ip: '2001:db8:1234:56ff:abcd::2' });
      expect((await limit(get(), { ip: '2001:db8:1234:5678::3' })).allowed).toBe(false);
      expect((await limit(get(), { ip: '2001:db8:1234:5700::1' })).allowed).toBe(true); // the next /56
    });

    it('groups IPv6 by ipv6Subnet, or not at all with false', async () => {
      expect((await rateLimit({ ipv6Subnet: 64, now })(get(), { ip: '2001:db8:1234:5678:9abc::1' })).key).toBe('2001:db8:1234:5678::/64');
      expect((await rateLimit({ ipv6Subnet: false, now })(get(), { ip: '2001:db8::1' })).key).toBe('2001:db8::1');
      expect((await rateLimit({ now })(get(), { ip: '::ffff:192.0.2.1' })).key).toBe('192.0.2.1');
    });

    it('ignores X-Forwarded-For unless trustProxy names the proxies (a client could write any address in it)', async () => {
      const spoofed = get({ 'x-forwarded-for': '192.0.2.99' });
      expect((await rateLimit({ now })(spoofed, { ip: CLIENT })).key).toBe(CLIENT);
      const behindOne = get({ 'x-forwarded-for': '192.0.2.99, 198.51.100.20' });
      expect((await rateLimit({ now, trustProxy: 1 })(behindOne, { ip: '10.0.0.2' })).key).toBe('198.51.100.20');
      expect((await rateLimit({ now, trustProxy: 2 })(behindOne, { ip: '10.0.0.2' })).key).toBe('192.0.2.99');
      expect((await rateLimit({ now, trustProxy: (address) => address.startsWith('10.') })(behindOne, { ip: '10.0.0.2' })).key).toBe('198.51.100.20');
    });

    it('reads ipHeader when the edge that sets it is trusted (Cloudflare: cf-connecting-ip)', async () => {
      const limit = rateLimit({ ipHeader: 'cf-connecting-ip', now });
      const result = await limit(get({ 'cf-connecting-ip': '2001:db8:abcd:12ff::1' }));
      expect(result.key).toBe('2001:db8:abcd:1200::/56');
    });

    it('takes a keyGenerator of the request and the given address, whose false lets a request through unlimited', async () => {
      const limit = rateLimit({ limit: 1, now, keyGenerator: (request, ip) => request.headers.get('x-api-key') ?? (ip === undefined ? false : `ip:${ip}`) });
      expect((await limit(get({ 'x-api-key': 'k1' }))).key).toBe('k1');
      expect((await limit(get(), { ip: CLIENT })).key).toBe(`ip:${CLIENT}`);
      const unlimited = await limit(get());
      expect(unlimited).toMatchObject({ allowed: true, key: undefined, decision: undefined });
      expect([...unlimited.headers]).toEqual([]);
    });
  });

  describe('a request without a client address', () => {
    it('rejects with ERR_RATEKIT_KEY when the call gives no ip (no silent fall-back to a header)', async () => {
      const limit = rateLimit({ now });
      // @ts-expect-error -- the call's type requires `ip` when neither keyGenerator nor ipHeader is set
      await expect(limit(get({ 'x-forwarded-for': CLIENT }))).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('the call gave no `ip`') });
      await expect(limit(get(), { ip: undefined })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });

    it('rejects with ERR_RATEKIT_KEY when Bun gives null (a Unix socket)', async () => {
      await expect(rateLimit({ now })(get(), { ip: null })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('null') });
    });

    it('rejects with ERR_RATEKIT_KEY when the trusted edge header is missing', async () => {
      await expect(rateLimit({ ipHeader: 'cf-connecting-ip', now })(get(), { ip: CLIENT })).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('cf-connecting-ip') });
    });

    it('rejects with ERR_RATEKIT_KEY when the keyGenerator throws or returns no usable key', async () => {
      const throwing = rateLimit({
        now,
        keyGenerator: () => {
          throw new Error('no session');
        },
      });
      await expect(throwing(get())).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY', message: expect.stringContaining('no session') });
      await expect(rateLimit({ now, keyGenerator: () => '' })(get())).rejects.toMatchObject({ code: 'ERR_RATEKIT_KEY' });
    });
  });
});
