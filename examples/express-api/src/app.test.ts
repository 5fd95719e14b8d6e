import { memoryStore } from '@ratekit/core';
import request from 'supertest';
import { createApp } from './app.js';

/** A fixed clock: the read bucket does not refill between requests. */
const T0 = 1_795_262_400_000;

describe('express-api example', () => {
  describe('GET /items (read policy: burst 20, 10 per second)', () => {
    it('admits a burst of 20, then answers 429 with draft-8, legacy and Retry-After headers', async () => {
      const app = createApp({ now: () => T0 });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await request(app).get('/items')).status);
      expect(statuses).toEqual(Array(20).fill(200));

      const refused = await request(app).get('/items');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['ratelimit']).toBe('"read"; r=0; t=1');
      expect(refused.headers['ratelimit-policy']).toBe('"read"; q=20; w=2; pk=:MTJjYTE3YjQ5YWYy:');
    });
  });

  describe('POST /items (write policy: 5 per 10 seconds)', () => {
    it('admits 5 writes, then refuses with the JSON message, without touching the read budget', async () => {
      const app = createApp({ now: () => T0, store: memoryStore() });
      for (let i = 0; i < 5; i++)
        expect(
          (
            await request(app)
              .post('/items')
              .send({ name: `n${i}` })
          ).status,
        ).toBe(201);
      const refused = await request(app).post('/items').send({ name: 'one too many' });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'Too many writes, please slow down.' });

      const read = await request(app).get('/items');
      expect(read.status).toBe(200);
      expect(read.body).toHaveLength(6);
      expect(read.headers['x-ratelimit-remaining']).toBe('19');
    });
  });

  describe('GET /health', () => {
    it('is not limited', async () => {
      const app = createApp({ now: () => T0 });
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/health');
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });
  });
});
