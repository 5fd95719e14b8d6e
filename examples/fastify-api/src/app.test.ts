import { memoryStore } from '@ratekit/core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';

/** A fixed clock: the read bucket does not refill between requests. */
const T0 = 1_795_262_400_000;

/** Smoke test over a real loopback socket (no inject), as a client would see the example. */
describe('fastify-api example', () => {
  let app: FastifyInstance;
  let base: string;

  async function start(options: Parameters<typeof buildApp>[0]): Promise<void> {
    app = await buildApp(options);
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  afterEach(async () => {
    await app.close();
  });

  describe('GET /items (read policy: burst 20, 10 per second)', () => {
    it('admits a burst of 20, then answers 429 with draft-8, legacy and Retry-After headers', async () => {
      await start({ now: () => T0 });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await fetch(`${base}/items`)).status);
      expect(statuses).toEqual(Array(20).fill(200));

      const refused = await fetch(`${base}/items`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit')).toBe('"read"; r=0; t=1');
      expect(refused.headers.get('ratelimit-policy')).toBe('"read"; q=20; w=2; pk=:MTJjYTE3YjQ5YWYy:');
    });
  });

  describe('POST /items (write policy: 5 per 10 seconds)', () => {
    it('admits 5 writes, then refuses with its own message, without touching the read budget', async () => {
      await start({ now: () => T0, store: memoryStore() });
      const post = (name: string) => fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      for (let i = 0; i < 5; i++) expect((await post(`n${i}`)).status).toBe(201);
      const refused = await post('one too many');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ statusCode: 429, error: 'Too many writes, please slow down.' });

      const read = await fetch(`${base}/items`);
      expect(read.status).toBe(200);
      expect(await read.json()).toHaveLength(6);
      expect(read.headers.get('x-ratelimit-remaining')).toBe('19');
    });
  });

  describe('GET /health', () => {
    it('is not limited', async () => {
      await start({ now: () => T0 });
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base}/health`);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      }
    });
  });
});
