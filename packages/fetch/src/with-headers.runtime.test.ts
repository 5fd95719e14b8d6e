// withHeaders: the rate-limit headers on the app’s response.
// Written against the runtime matrix's subset of jest, so it runs on Node (jest), Bun, Deno and workerd alike.
import { rateLimit, withHeaders } from '@ratekit/fetch';
import { CLIENT, get, T0, testClock } from './test-support.js';

describe('withHeaders', () => {
  const clock = testClock();
  const now = clock.now;
  beforeEach(() => {
    clock.t = T0;
  });

  it('withHeaders sets them on the app’s response in place when its headers can change', async () => {
    const limit = rateLimit({ limit: 5, windowMs: 60_000, now });
    const { headers } = await limit(get(), { ip: CLIENT });
    const own = new Response('ok', { headers: { 'content-type': 'text/plain' } });
    expect(withHeaders(own, headers)).toBe(own);
    expect(own.headers.get('ratelimit')).toBe('"5-in-1min"; r=4; t=60');
  });

  it('withHeaders answers a copy (status, body, headers) when the response’s headers are immutable, as fetch()’s are', async () => {
    const limit = rateLimit({ limit: 5, windowMs: 60_000, now });
    const { headers } = await limit(get(), { ip: CLIENT });
    const immutable = new Headers({ etag: '"v1"' });
    Object.defineProperty(immutable, 'set', {
      value: () => {
        throw new TypeError('immutable');
      },
    });
    const fetched = new Response('upstream body', { status: 201, statusText: 'Created' });
    Object.defineProperty(fetched, 'headers', { value: immutable });
    const sent = withHeaders(fetched, headers);
    expect(sent).not.toBe(fetched);
    expect([sent.status, sent.statusText, sent.headers.get('etag')]).toEqual([201, 'Created', '"v1"']);
    expect(sent.headers.get('ratelimit')).toBe('"5-in-1min"; r=4; t=60');
    expect(await sent.text()).toBe('upstream body');
  });
});
