/**
 * Stores written to express-rate-limit's contract plug in unchanged: the
 * shape checks and the legacy wrapper, then the real `rate-limit-redis`
 * (with node-redis and with ioredis) and `rate-limit-memcached` packages
 * against real servers (REDIS_URL / MEMCACHED_SERVERS, or servers started
 * from the binaries; in CI a missing server fails, elsewhere it skips with
 * one line).
 */
import { describeWithService, memcachedService, redisService } from '@ratekit/test-utils';
import type { Express, Request } from 'express';
import { Redis as IORedis } from 'ioredis';
import { MemcachedStore } from 'rate-limit-memcached';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import request from 'supertest';
import { rateLimit } from '../rate-limit.js';
import { isRateKitStore } from '../is-ratekit-store.js';
import { hasStoreShape, isLegacyStore, PromisifiedStore } from './stores.js';
import { appServing, withDecrements } from './test-app.js';
import type { RateLimitOptions, RateLimitRequestHandler, Store } from '../types.js';

const quiet = { warn: () => undefined, error: () => undefined };

describe('store detection', () => {
  const modern = { increment: () => ({ totalHits: 1, resetTime: undefined }), decrement: () => undefined, resetKey: () => undefined };
  const legacy = { incr: () => undefined, decrement: () => undefined, resetKey: () => undefined };

  it.each<[string, unknown, { shape: boolean; legacy: boolean; ratekit: boolean }]>([
    ['a modern store', modern, { shape: true, legacy: false, ratekit: false }],
    ['a legacy incr store', legacy, { shape: false, legacy: true, ratekit: false }],
    ['a store with both incr and increment (modern)', { ...legacy, ...modern }, { shape: true, legacy: false, ratekit: false }],
    ['a store whose resetAll is not a function', { ...modern, resetAll: 1 }, { shape: false, legacy: false, ratekit: false }],
    ['a ratekit store', { name: 'm', shared: false, clock: 'caller', evaluate: () => undefined, resetKey: () => undefined }, { shape: false, legacy: false, ratekit: true }],
    ['nothing', undefined, { shape: false, legacy: false, ratekit: false }],
  ])('%s', (_situation, store, expected) => {
    expect({ shape: hasStoreShape(store), legacy: isLegacyStore(store), ratekit: isRateKitStore(store) }).toEqual(expected);
  });
});

describe('PromisifiedStore', () => {
  it('turns incr callbacks into promises', async () => {
    const resetTime = new Date(1_000);
    const store = new PromisifiedStore({ incr: (_key, callback) => callback(undefined, 3, resetTime), decrement: () => undefined, resetKey: () => undefined });
    await expect(store.increment('k')).resolves.toEqual({ totalHits: 3, resetTime });
  });

  it('rejects with the error an incr callback reports', async () => {
    const store = new PromisifiedStore({ incr: (_key, callback) => callback(new Error('down'), 0, undefined), decrement: () => undefined, resetKey: () => undefined });
    await expect(store.increment('k')).rejects.toThrow('down');
  });

  it('forwards decrement, resetKey and resetAll', async () => {
    const calls: string[] = [];
    const store = new PromisifiedStore({
      incr: () => undefined,
      decrement: (key) => void calls.push(`decrement ${key}`),
      resetKey: (key) => void calls.push(`resetKey ${key}`),
      resetAll: () => void calls.push('resetAll'),
    });
    await store.decrement('a');
    await store.resetKey('b');
    await store.resetAll();
    expect(calls).toEqual(['decrement a', 'resetKey b', 'resetAll']);
  });
});

/** An app with one limiter on `/` and `/fail`; `/info` shows req.rateLimit. */
function appWith(options: RateLimitOptions): { app: Express; limiter: RateLimitRequestHandler } {
  const limiter = rateLimit({ logger: quiet, ...options });
  return { app: appServing(limiter), limiter };
}

async function statuses(app: Express, count: number, path = '/'): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await request(app).get(path)).status);
  return seen;
}

/** The behaviour every express-rate-limit store must show behind the middleware. */
function storeBehaviour(makeStore: (prefix: string) => Store) {
  let run = 0;
  const prefix = () => `ratekit-express-test:${process.pid}:${Date.now()}:${run++}:`;

  it('admits `limit` requests, then refuses, with legacy and draft-7 headers from the store’s counts', async () => {
    const { app } = appWith({ windowMs: 60_000, limit: 2, standardHeaders: 'draft-7', store: makeStore(prefix()) });
    const first = await request(app).get('/');
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(first.headers['ratelimit-policy']).toBe('2;w=60');
    expect(first.headers['ratelimit']).toMatch(/^limit=2, remaining=1, reset=(59|60)$/);
    expect(await statuses(app, 2)).toEqual([200, 429]);
    const refused = await request(app).get('/');
    expect(refused.headers['retry-after']).toMatch(/^(59|60)$/);
  });

  it('fills req.rateLimit from the store, refused requests counted', async () => {
    const { app } = appWith({ limit: 1, store: makeStore(prefix()), handler: (req, res) => res.status(429).json((req as Request & { rateLimit?: unknown }).rateLimit) });
    await request(app).get('/info');
    const res = await request(app).get('/info');
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ limit: 1, used: 2, remaining: 0, key: expect.stringMatching(/127\.0\.0\.1$/) });
    expect(Date.parse(res.body.resetTime) - Date.now()).toBeGreaterThan(50_000);
  });

  it('resetKey forgets a client', async () => {
    const { app, limiter } = appWith({ limit: 1, store: makeStore(prefix()) });
    expect(await statuses(app, 2)).toEqual([200, 429]);
    // The key of a local client, as the default key generator makes it (ipKeyGenerator of req.ip).
    await limiter.resetKey('127.0.0.1');
    expect(await statuses(app, 1)).toEqual([200]);
  });

  it('skipFailedRequests takes failed requests back through decrement', async () => {
    const { store, decrements } = withDecrements(makeStore(prefix()));
    const { app } = appWith({ limit: 1, skipFailedRequests: true, store });
    expect(await statuses(app, 3, '/fail')).toEqual([500, 500, 500]);
    // The decrements run after each response has gone: wait until all three have landed.
    await decrements(3);
    expect(await statuses(app, 2)).toEqual([200, 429]);
  });
}

describeWithService(redisService, 'rate-limit-redis (real Redis)', (server) => {
  describe('with node-redis (sendCommand)', () => {
    let client: ReturnType<typeof createClient>;
    beforeAll(async () => {
      client = createClient({ url: server().url });
      await client.connect();
    });
    afterAll(async () => {
      await client.close();
    });

    storeBehaviour((prefix) => new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand(args) }));

    it('getKey answers the store’s get: hits and reset time', async () => {
      const { app, limiter } = appWith({ limit: 5, store: new RedisStore({ prefix: `ratekit-express-getkey:${Date.now()}:`, sendCommand: (...args: string[]) => client.sendCommand(args) }) });
      const { key } = (await request(app).get('/info')).body as { key: string };
      await request(app).get('/');
      const hits = (await limiter.getKey(key)) as { totalHits: number; resetTime: Date };
      expect(hits.totalHits).toBe(2);
      expect(hits.resetTime.getTime()).toBeGreaterThan(Date.now());
    });
  });

  describe('with ioredis (call)', () => {
    let client: IORedis;
    beforeAll(() => {
      client = new IORedis(server().url);
    });
    afterAll(async () => {
      await client.quit();
    });

    storeBehaviour(
      (prefix) =>
        new RedisStore({
          prefix,
          sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<number>,
        }),
    );
  });
});

describeWithService(memcachedService, 'rate-limit-memcached (real Memcached)', (server) => {
  const stores: MemcachedStore[] = [];
  afterAll(() => {
    for (const store of stores) (store.client as unknown as { end(): void }).end();
  });

  storeBehaviour((prefix) => {
    const store = new MemcachedStore({ prefix, locations: [server().url] });
    stores.push(store);
    return store;
  });
});
