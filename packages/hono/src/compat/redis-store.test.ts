// RedisStore (hono-rate-limiter's, on an Upstash-shaped client) against a real Redis behind a local endpoint
// speaking Upstash's REST protocol (@ratekit/test-utils' startUpstashRestServer), through the real @upstash/redis.
import { describeWithService, privateRedisService, redisService, startUpstashRestServer, type UpstashRestServer } from '@ratekit/test-utils';
import { Redis } from '@upstash/redis';
import { RedisStore as UpstreamRedisStore } from 'hono-rate-limiter';
import { createClient } from 'redis';
import { RedisStore } from './redis-store.js';

type NodeRedis = Awaited<ReturnType<typeof connect>>;
const connect = (url: string) => createClient({ url }).connect();

describeWithService(redisService, 'RedisStore over a local Upstash REST endpoint, on a real Redis', (server) => {
  let admin: NodeRedis;
  let rest: UpstashRestServer;
  let client: Redis;
  // Keys of this file only, on the shared Redis (never flushed).
  const prefix = `ratekit-hono-test:${process.pid}:${Date.now()}:`;
  beforeAll(async () => {
    admin = await connect(server().url);
    rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
    client = new Redis({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false });
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(keys);
    await rest.close();
    await admin.quit();
  });

  it("keeps hono-rate-limiter's layout: one counter per key, expiring with the window", async () => {
    const store = new RedisStore({ client, prefix });
    store.init({ windowMs: 10_000 });
    await store.increment('a');
    const { totalHits, resetTime } = await store.increment('a');
    expect(totalHits).toBe(2);
    expect(await admin.get(`${prefix}a`)).toBe('2');
    const ttl = await admin.pTTL(`${prefix}a`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000);
    // resetTime is this host's clock plus the key's TTL: within the window from now.
    expect(resetTime!.getTime() - Date.now()).toBeLessThanOrEqual(10_000);
  });

  it('counts together with hono-rate-limiter 0.5.4 on the same keys (a rolling deploy)', async () => {
    const ours = new RedisStore({ client, prefix });
    const theirs = new UpstreamRedisStore({ client, prefix });
    ours.init({ windowMs: 10_000 });
    theirs.init({ windowMs: 10_000 } as never);
    expect((await theirs.increment('shared')).totalHits).toBe(1);
    expect((await ours.increment('shared')).totalHits).toBe(2);
    expect((await theirs.increment('shared')).totalHits).toBe(3);
    await ours.decrement('shared');
    expect((await theirs.get('shared'))?.totalHits).toBe(2);
    expect((await ours.get('shared'))?.totalHits).toBe(2);
  });

  it('never decrements below zero, nor creates a key without an expiry', async () => {
    const store = new RedisStore({ client, prefix });
    store.init({ windowMs: 10_000 });
    await store.decrement('never-hit');
    expect(await admin.exists(`${prefix}never-hit`)).toBe(0);
    await store.increment('once');
    await store.decrement('once');
    await store.decrement('once');
    expect(await admin.get(`${prefix}once`)).toBe('0');
  });

  it('resetKey deletes the key', async () => {
    const store = new RedisStore({ client, prefix });
    store.init({ windowMs: 10_000 });
    await store.increment('gone');
    await store.resetKey('gone');
    expect(await admin.exists(`${prefix}gone`)).toBe(0);
  });
});

describeWithService(privateRedisService, 'RedisStore when the server lost its script (on a Redis of its own: SCRIPT FLUSH)', (server) => {
  it('loads the script again and retries once', async () => {
    const admin = await connect(server().url);
    const rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
    try {
      const store = new RedisStore({ client: new Redis({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false }) });
      store.init({ windowMs: 10_000 });
      await store.increment('flushed');
      await admin.scriptFlush();
      expect((await store.increment('flushed')).totalHits).toBe(2);
    } finally {
      await rest.close();
      await admin.quit();
    }
  });
});
