/**
 * A rolling deploy from express-rate-limit to @ratekit/express, on one real
 * Redis: while the fleet is half old, half new, the real express-rate-limit
 * and ours both count through a `rate-limit-redis` RedisStore with the same
 * prefix, and one client's requests land on either. The limit must hold
 * exactly across both: the same keys, the same counts, the same refusals.
 * (REDIS_URL, or a server started from the binary; in CI a missing server
 * fails, elsewhere it skips with one line.)
 */
import { describeWithService, redisService } from '@ratekit/test-utils';
import { rateLimit as realRateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { appServing, withDecrements } from './test-app.js';
import { createClient } from 'redis';
import request from 'supertest';
import { rateLimit } from '../rate-limit.js';

const quiet = { warn: () => undefined, error: () => undefined };

describeWithService(redisService, 'a rolling deploy from express-rate-limit to @ratekit/express on one Redis', (server) => {
  let client: ReturnType<typeof createClient>;
  let run = 0;
  beforeAll(async () => {
    client = createClient({ url: server().url });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
  });

  /** The old and the new instance, each with its own RedisStore on the same Redis and prefix. */
  function fleet(options: { limit: number; windowMs: number; skipFailedRequests?: boolean }) {
    const prefix = `ratekit-express-rolling:${process.pid}:${Date.now()}:${run++}:`;
    const [oldStore, ourStore] = [0, 1].map(() => withDecrements(new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand(args) })));
    const old = realRateLimit({ ...options, store: oldStore!.store, logger: quiet });
    const ours = rateLimit({ ...options, store: ourStore!.store, logger: quiet });
    /** Resolves once each instance's store was asked for its decrements and all have landed. */
    const decrements = (onOld: number, onOurs: number) => Promise.all([oldStore!.decrements(onOld), ourStore!.decrements(onOurs)]);
    return { old: appServing(old), ours: appServing(ours), oldLimiter: old, ourLimiter: ours, decrements };
  }

  it('holds the limit exactly while one client’s requests alternate between the two', async () => {
    const { old, ours } = fleet({ limit: 5, windowMs: 60_000 });
    const seen: Array<[string, number, number]> = [];
    for (let i = 0; i < 8; i++) {
      const [name, app] = i % 2 === 0 ? ['old', old] : ['ours', ours];
      const res = await request(app).get('/');
      seen.push([name, res.status, Number(res.headers['x-ratelimit-remaining'])]);
    }
    expect(seen).toEqual([
      ['old', 200, 4],
      ['ours', 200, 3],
      ['old', 200, 2],
      ['ours', 200, 1],
      ['old', 200, 0],
      ['ours', 429, 0],
      ['old', 429, 0],
      ['ours', 429, 0],
    ]);
  });

  it('counts under the same key with the same hits: each sees the other’s requests in req.rateLimit', async () => {
    const { old, ours } = fleet({ limit: 10, windowMs: 60_000 });
    const fromOld = (await request(old).get('/info')).body as { key: string; used: number; resetTime: string };
    const fromOurs = (await request(ours).get('/info')).body as { key: string; used: number; resetTime: string };
    expect(fromOurs.key).toBe(fromOld.key);
    expect([fromOld.used, fromOurs.used]).toEqual([1, 2]);
    // One window, opened by the first request (Redis' PEXPIRE, read back by both).
    expect(Math.abs(Date.parse(fromOurs.resetTime) - Date.parse(fromOld.resetTime))).toBeLessThan(1_000);
  });

  it('a reset on either instance frees the client on both', async () => {
    const { old, ours, ourLimiter } = fleet({ limit: 2, windowMs: 60_000 });
    const { key } = (await request(old).get('/info')).body as { key: string };
    expect((await request(ours).get('/')).status).toBe(200);
    expect((await request(old).get('/')).status).toBe(429);
    await ourLimiter.resetKey(key);
    const statuses = [];
    for (const app of [old, ours, old]) statuses.push((await request(app).get('/')).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('skipFailedRequests takes the failures back whichever instance served them', async () => {
    const { old, ours, decrements } = fleet({ limit: 2, windowMs: 60_000, skipFailedRequests: true });
    for (const app of [old, ours, old, ours]) expect((await request(app).get('/fail')).status).toBe(500);
    // The decrements run after each response has gone: wait until all four have landed.
    await decrements(2, 2);
    const statuses = [];
    for (const app of [ours, old, ours]) statuses.push((await request(app).get('/')).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
