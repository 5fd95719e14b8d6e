import { describeWithService, freshNamespace, redisService } from '@ratekit/test-utils';
import { createClient } from 'redis';
import request from 'supertest';
import { createApp as createExampleApp } from './app.js';

/**
 * The example's app, waiting up to 10 s for Redis instead of its 200 ms: these tests count Redis's
 * decisions, and on a busy machine a round trip passed 200 ms, so the app failed open (39 of 60
 * concurrent requests admitted instead of 10).
 */
const createApp = (options: Omit<Parameters<typeof createExampleApp>[0], 'storeTimeoutMs'>) => createExampleApp({ ...options, storeTimeoutMs: 10_000 });

/**
 * Smoke test of the example on a real Redis (REDIS_URL, or a redis-server of
 * its own): one app, and two apps on two connections standing in for the two
 * processes of two-processes.mjs (which runs the built packages).
 */
describeWithService(redisService, 'express-redis example', (server) => {
  const clients: Array<ReturnType<typeof createClient>> = [];
  const connect = async () => {
    const client = createClient({ url: server().url });
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });

  describe('GET /api/hello (10 per rolling minute per API key)', () => {
    it('admits 10 requests of one key, then answers 429 with the JSON message and Retry-After; another key has its own budget', async () => {
      const app = createApp({ client: await connect(), prefix: freshNamespace('example'), name: 'solo' });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await request(app).get('/api/hello').set('X-Api-Key', 'alice')).status);
      expect(statuses).toEqual(Array(10).fill(200));

      const refused = await request(app).get('/api/hello').set('X-Api-Key', 'alice');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'Too many requests: 10 per minute per API key, shared by every server.' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-served-by']).toBe('solo');

      const other = await request(app).get('/api/hello').set('X-Api-Key', 'bob');
      expect(other.status).toBe(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('9');
    });
  });

  describe('two apps on two Redis connections (two processes)', () => {
    it('share one budget: 20 alternating requests → 10 allowed in total, 5 by each', async () => {
      const prefix = freshNamespace('example');
      const apps = [createApp({ client: await connect(), prefix, name: 'A' }), createApp({ client: await connect(), prefix, name: 'B' })];
      const allowed = { A: 0, B: 0 };
      for (let i = 0; i < 20; i++) {
        const response = await request(apps[i % 2]!)
          .get('/api/hello')
          .set('X-Api-Key', 'carol');
        expect(response.headers['x-served-by']).toBe(i % 2 === 0 ? 'A' : 'B');
        if (response.status === 200) allowed[i % 2 === 0 ? 'A' : 'B']++;
        else expect(response.status).toBe(429);
      }
      expect(allowed).toEqual({ A: 5, B: 5 });
    });

    it('share it under concurrency too: 60 concurrent requests → exactly 10 allowed', async () => {
      const prefix = freshNamespace('example');
      const apps = [createApp({ client: await connect(), prefix }), createApp({ client: await connect(), prefix })];
      const responses = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          request(apps[i % 2]!)
            .get('/api/hello')
            .set('X-Api-Key', 'dave'),
        ),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(50);
    });
  });

  describe('GET /health', () => {
    it('is not limited', async () => {
      const app = createApp({ client: await connect(), prefix: freshNamespace('example') });
      const response = await request(app).get('/health');
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    });
  });
});
