import type { INestApplication } from '@nestjs/common';
import { memoryStore } from '@ratekit/core';
import { createApp, type Platform } from './app.js';

/**
 * A fixed clock: the read bucket does not refill between requests. The Nest module has no clock
 * option, so only `Date` is faked (timers, ticks and I/O run for real).
 */
const T0 = 1_795_262_400_000;
const REAL_TIMERS = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] as const;

/** Smoke test over a real loopback socket, as a client would see the example, on both of Nest's platforms. */
describe.each<Platform>(['express', 'fastify'])('nestjs-api example on %s', (platform) => {
  let app: INestApplication;
  let base: string;

  async function start(options: Parameters<typeof createApp>[0] = {}): Promise<void> {
    app = await createApp({ platform, ...options });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  }

  beforeEach(() => {
    jest.useFakeTimers({ now: T0, doNotFake: [...REAL_TIMERS] });
  });

  afterEach(async () => {
    await app.close();
    jest.useRealTimers();
  });

  describe('GET /items (read policy: burst 20, 10 per second)', () => {
    it('admits a burst of 20, then answers 429 with Retry-After and the draft-8 fields', async () => {
      await start();
      const first = await fetch(`${base}/items`);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual([{ id: 1, name: 'first item' }]);
      expect(first.headers.get('x-ratelimit-limit')).toBe('20');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('19');
      expect(first.headers.get('ratelimit')).toBe('"default"; r=19; t=1');
      const statuses: number[] = [];
      for (let i = 1; i < 20; i++) statuses.push((await fetch(`${base}/items`)).status);
      expect(statuses).toEqual(Array(19).fill(200));

      const refused = await fetch(`${base}/items`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('ratelimit')).toBe('"default"; r=0; t=1');
      expect(refused.headers.get('ratelimit-policy')).toMatch(/^"default"; q=20; w=2; pk=:[A-Za-z0-9+/]+=*:$/);
    });
  });

  describe('POST /items (write policy: 5 per 10 seconds)', () => {
    it('admits 5 writes, then refuses with its own message, without touching the read budget', async () => {
      await start({ store: memoryStore() });
      const post = (name: string) => fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      for (let i = 0; i < 5; i++) expect((await post(`n${i}`)).status).toBe(201);
      const refused = await post('one too many');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ statusCode: 429, message: 'Too many writes, please slow down.' });
      // T0 starts a 10 s window holding the 5 writes. The sliding window admits a 6th once this
      // window's count, weighted by what is left of it, plus 1 fits in 5: 5 × (1 − 0.2) + 1 = 5, at 12 s.
      expect(refused.headers.get('retry-after')).toBe('12');
      expect(refused.headers.get('ratelimit-policy')).toMatch(/^"default"; q=5; w=10; /);

      const read = await fetch(`${base}/items`);
      expect(read.status).toBe(200);
      expect(await read.json()).toHaveLength(6);
      expect(read.headers.get('x-ratelimit-remaining')).toBe('19');
    });
  });

  describe('GET /health', () => {
    it('is not limited', async () => {
      await start();
      for (let i = 0; i < 25; i++) {
        const res = await fetch(`${base}/health`);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      }
    });
  });
});
