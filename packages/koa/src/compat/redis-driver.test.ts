import { createServer, type Server, type Socket } from 'node:net';
import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import Koa from 'koa';
import request from 'supertest';
import { ratelimit } from '../rate-limit.js';

// The incumbent: the old instances of a rolling deploy.
const upstream = require('koa-ratelimit') as (options: Record<string, unknown>) => Koa.Middleware;
const ours = (options: Record<string, unknown>) => ratelimit(options as never) as unknown as Koa.Middleware;

function appWith(middleware: Koa.Middleware) {
  const app = new Koa();
  const errors: unknown[] = [];
  app.on('error', (error) => errors.push(error));
  app.use(middleware);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return { errors, get: () => request(app.callback()).get('/') };
}

describeWithService(redisService, "the 'redis' driver: koa-ratelimit's sorted sets, keys and answers", (server) => {
  const clients: Redis[] = [];
  let sequence = 0;

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.quit()));
  });

  function client(): Redis {
    const redis = new Redis(server().url);
    clients.push(redis);
    return redis;
  }

  /** A namespace no other test (or run) uses. */
  const fresh = () => `koa-compat-${process.pid}-${++sequence}`;

  it('a rolling deploy: koa-ratelimit and ours, taking turns on one client, hold max exactly', async () => {
    const namespace = fresh();
    const options = (db: Redis) => ({ db, max: 10, duration: 60_000, namespace, id: () => 'client-1' });
    const old = appWith(upstream(options(client())));
    const next = appWith(ours(options(client()))); // no `driver`: a Redis client as db picks 'redis', koa-ratelimit's default
    const answers: Array<[string, number, string]> = [];
    for (let i = 0; i < 14; i++) {
      const [name, app] = i % 2 === 0 ? ['old', old] : ['new', next];
      const res = await app.get();
      answers.push([name, res.status, res.headers['x-ratelimit-remaining'] as string]);
    }
    expect(answers).toEqual([
      ['old', 200, '9'],
      ['new', 200, '8'],
      ['old', 200, '7'],
      ['new', 200, '6'],
      ['old', 200, '5'],
      ['new', 200, '4'],
      ['old', 200, '3'],
      ['new', 200, '2'],
      ['old', 200, '1'],
      ['new', 200, '0'],
      ['old', 429, '0'],
      ['new', 429, '0'],
      ['old', 429, '0'],
      ['new', 429, '0'],
    ]);
    // One member per admitted request; refusals record nothing.
    const redis = client();
    expect(await redis.zcard(`${namespace}:client-1`)).toBe(10);
    expect(await redis.pttl(`${namespace}:client-1`)).toBeGreaterThan(59_000);
  });

  it('answers a refusal with the same status, body and headers as koa-ratelimit', async () => {
    const answersOf = async (factory: typeof ours) => {
      const app = appWith(factory({ driver: 'redis', db: client(), max: 2, duration: 3_600_000, namespace: fresh() }));
      const out = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.get();
        out.push({
          status: res.status,
          text: res.text,
          remaining: res.headers['x-ratelimit-remaining'],
          limit: res.headers['x-ratelimit-limit'],
          retryAfter: res.headers['retry-after'],
          reset: res.headers['x-ratelimit-reset'],
        });
      }
      return out;
    };
    const [theirs, mine] = [await answersOf(upstream), await answersOf(ours)];
    // The reset second (and so Retry-After) can differ when a second ends between the two runs.
    const timeless = (answers: typeof mine) => answers.map(({ reset: _reset, retryAfter: _after, ...rest }) => rest);
    expect(timeless(mine)).toEqual(timeless(theirs));
    expect(Math.abs(Number(mine[2]!.retryAfter) - Number(theirs[2]!.retryAfter))).toBeLessThanOrEqual(1);
    expect(mine[2]).toMatchObject({ status: 429, text: 'Rate limit exceeded, retry in 60 minutes.', remaining: '0', limit: '2' });
    // Reset is whole epoch seconds on Redis, floored, so the ms left are a little under the hour: `60 minutes`.
    expect(mine[0]!.reset).toMatch(/^\d+$/);
  });

  it('slides: a request is admitted again once the oldest admitted one is duration old', async () => {
    // The driver reads Redis's clock (TIME), which no fake reaches: each step waits on that clock for
    // its moment instead of sleeping for a time, and the steps are 1 s apart, so the two requests
    // sent right after each wait have 1 s of margin to be decided inside their span.
    const redis = client();
    const namespace = fresh();
    const app = appWith(ours({ db: redis, max: 2, duration: 2_000, namespace, id: () => 'ann' }));
    const serverMs = async () => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1_000 + Number(micros) / 1_000;
    };
    const untilServerPast = async (ms: number) => {
      while ((await serverMs()) <= ms) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    await app.get().expect(200);
    const first = Number((await redis.zrange(`${namespace}:ann`, '0', '0', 'WITHSCORES'))[1]);
    await untilServerPast(first + 1_000);
    await app.get().expect(200);
    await app.get().expect(429); // the first is in the window until first + 2 s
    await untilServerPast(first + 2_000);
    await app.get().expect(200); // the first has left the window
    await app.get().expect(429); // the second has not: it stays until at least first + 3 s
  });

  it('resetKey forgets a client on Redis', async () => {
    const middleware = ratelimit({ db: client(), max: 1, namespace: fresh(), id: () => 'ann' });
    const app = appWith(middleware);
    await app.get().expect(200);
    await app.get().expect(429);
    await middleware.resetKey('ann');
    await app.get().expect(200);
  });

  it('fails the request with 500 (ERR_RATEKIT_STORE) when Redis answers an error, as koa-ratelimit does', async () => {
    const namespace = fresh();
    const redis = client();
    await redis.set(`${namespace}:ann`, 'not a sorted set');
    const app = appWith(ours({ db: redis, namespace, id: () => 'ann' }));
    await app.get().expect(500);
    expect(app.errors).toEqual([expect.objectContaining({ code: 'ERR_RATEKIT_STORE', message: expect.stringContaining('WRONGTYPE') })]);
  });
});

describe("the 'redis' driver on a Redis that never answers", () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    silent = createServer((socket) => void sockets.push(socket)); // accepts, reads, never replies
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('fails the request after storeTimeoutMs with 500 (ERR_RATEKIT_STORE) instead of hanging (koa-ratelimit waits for ever)', async () => {
    const { port } = silent.address() as { port: number };
    const redis = new Redis({ port, host: '127.0.0.1', enableReadyCheck: false, maxRetriesPerRequest: 0 });
    try {
      const app = appWith(ours({ db: redis, storeTimeoutMs: 100 }));
      const started = Date.now();
      await app.get().expect(500);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(app.errors).toEqual([expect.objectContaining({ code: 'ERR_RATEKIT_STORE', message: expect.stringContaining('did not answer within 100 ms') })]);
    } finally {
      redis.disconnect();
    }
  });
});
