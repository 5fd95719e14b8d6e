import { getConnInfo } from 'hono/cloudflare-workers';
import { createApp } from './app.js';

/** A fixed clock: the read bucket does not refill between requests. */
const T0 = 1_795_262_400_000;
const client = { 'cf-connecting-ip': '203.0.113.9' };

interface App {
  request(path: string, init?: RequestInit): Promise<Response>;
}

describe('hono-api example', () => {
  describe('GET /items (read policy: burst 20, 10 per second)', () => {
    it('admits a burst of 20, then answers 429 with draft-8, legacy and Retry-After headers', async () => {
      const app = createApp({ getConnInfo, now: () => T0 }) as App;
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await app.request('/items', { headers: client })).status);
      expect(statuses).toEqual(Array(20).fill(200));

      const refused = await app.request('/items', { headers: client });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit')).toBe('"read"; r=0; t=1');
      expect(refused.headers.get('ratelimit-policy')).toMatch(/^"read"; q=20; w=2; pk=:[\w+/=]+:$/);
    });
  });

  describe('POST /items (write policy: 5 per 10 seconds)', () => {
    it('admits 5 writes, then refuses with the JSON message, without touching the read budget', async () => {
      const app = createApp({ getConnInfo, now: () => T0 }) as App;
      const post = (name: string) => app.request('/items', { method: 'POST', headers: { ...client, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      for (let i = 0; i < 5; i++) expect((await post(`n${i}`)).status).toBe(201);
      const refused = await post('one too many');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ error: 'Too many writes, please slow down.' });
      expect((await app.request('/items', { headers: client })).headers.get('x-ratelimit-remaining')).toBe('19');
    });
  });
});
