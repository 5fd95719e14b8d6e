import { describeWithService, freePort, redisService } from '@ratekit/test-utils';
import Fastify, { type FastifyInstance, type FastifyPluginCallback } from 'fastify';
import { Redis } from 'ioredis';
import fastifyRateLimit from '../index.js';

// The incumbent, loaded untyped: its type declarations augment Fastify's and would clash with ours.
const upstream = require('@fastify/rate-limit') as FastifyPluginCallback<Record<string, unknown>>;
const UpstreamRedisStore = require('@fastify/rate-limit/store/RedisStore') as new (...args: unknown[]) => object;

describeWithService(redisService, "the `redis` option: @fastify/rate-limit's Redis semantics and keys", (server) => {
  const clients: Redis[] = [];
  const apps: FastifyInstance[] = [];
  let sequence = 0;

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await Promise.all(clients.splice(0).map((client) => client.quit()));
  });

  function client(): Redis {
    const redis = new Redis(server().url);
    clients.push(redis);
    return redis;
  }

  async function app(plugin: unknown, options: Record<string, unknown>, routes: (app: FastifyInstance) => void = (a) => a.get('/', async () => 'ok')) {
    const instance = Fastify();
    apps.push(instance);
    await instance.register(plugin as FastifyPluginCallback<Record<string, unknown>>, options);
    routes(instance);
    await instance.ready();
    return instance;
  }

  const fresh = () => `compat-${process.pid}-${++sequence}-`;

  it('a rolling deploy: the old plugin and ours, taking turns on one client, keep one exact count', async () => {
    const nameSpace = fresh();
    const options = (redis: Redis) => ({ max: 5, timeWindow: 60_000, redis, nameSpace });
    const old = await app(upstream, options(client()));
    const next = await app(fastifyRateLimit, options(client()));
    const answers: Array<[string, number, string | undefined]> = [];
    for (let i = 0; i < 8; i++) {
      const [name, instance] = i % 2 === 0 ? ['old', old] : ['new', next];
      const res = await instance.inject('/');
      answers.push([name, res.statusCode, res.headers['x-ratelimit-remaining'] as string | undefined]);
    }
    expect(answers).toEqual([
      ['old', 200, '4'],
      ['new', 200, '3'],
      ['old', 200, '2'],
      ['new', 200, '1'],
      ['old', 200, '0'],
      ['new', 429, '0'],
      ['old', 429, '0'],
      ['new', 429, '0'],
    ]);
    expect(await client().get(`${nameSpace}127.0.0.1`)).toBe('8');
  });

  it('a route of its own shares upstream’s key too (<nameSpace><method><url>-<key>)', async () => {
    const nameSpace = fresh();
    const routes = (a: FastifyInstance) => a.post('/login', { config: { rateLimit: { max: 2, timeWindow: 60_000 } } }, async () => 'ok');
    const old = await app(upstream, { global: false, redis: client(), nameSpace }, routes);
    const next = await app(fastifyRateLimit, { global: false, redis: client(), nameSpace }, routes);
    const post = async (instance: FastifyInstance) => (await instance.inject({ method: 'POST', url: '/login' })).statusCode;
    expect([await post(old), await post(next), await post(old), await post(next)]).toEqual([200, 200, 429, 429]);
    expect(await client().get(`${nameSpace}POST/login-127.0.0.1`)).toBe('4');
  });

  it.each([
    ['continueExceeding', { continueExceeding: true }],
    ['exponentialBackoff', { exponentialBackoff: true }],
  ])('%s sets the same expiry as upstream’s script', async (_name, extra) => {
    const expiries: number[][] = [];
    for (const plugin of [upstream, fastifyRateLimit]) {
      const nameSpace = fresh();
      const redis = client();
      const instance = await app(plugin, { max: 1, timeWindow: 10_000, redis, nameSpace, ...extra });
      const ttls: number[] = [];
      for (let i = 0; i < 4; i++) {
        await instance.inject('/');
        ttls.push(Math.round((await redis.pttl(`${nameSpace}127.0.0.1`)) / 1000));
      }
      expiries.push(ttls);
    }
    expect(expiries[1]).toEqual(expiries[0]);
  });

  it('takes @fastify/rate-limit’s own RedisStore class as `store`, unchanged', async () => {
    const redis = client();
    const nameSpace = fresh();
    class Store extends UpstreamRedisStore {
      constructor() {
        super(false, false, redis, nameSpace);
      }
    }
    const instance = await app(fastifyRateLimit, { max: 2, timeWindow: 60_000, store: Store });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await instance.inject('/')).statusCode);
    expect(codes).toEqual([200, 200, 429]);
    expect(await redis.get(`${nameSpace}127.0.0.1`)).toBe('3');
  });

  it('createRateLimit() peeks on Redis with { increment: false }, as upstream', async () => {
    const nameSpace = fresh();
    const instance = await app(fastifyRateLimit, { global: false, redis: client(), nameSpace }, (a) => {
      const check = (a as unknown as { createRateLimit(o: object): (r: unknown, o?: object) => Promise<Record<string, unknown>> }).createRateLimit({ max: 1, timeWindow: 60_000 });
      a.get('/', async (request) => [await check(request), await check(request, { increment: false }), await check(request)]);
    });
    const [first, peek, second] = (await instance.inject('/')).json<Array<Record<string, unknown>>>();
    expect([first!.remaining, first!.isExceeded, peek!.remaining, peek!.isExceeded, second!.isExceeded]).toEqual([0, false, 0, false, true]);
  });
});

describe('the `redis` option when Redis is down', () => {
  it.each([
    [false, 500],
    [true, 200],
  ])('skipOnError: %s answers %i, without hanging', async (skipOnError, status) => {
    const port = await freePort();
    const redis = new Redis({ port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const instance = Fastify();
    await instance.register(fastifyRateLimit, { max: 1, redis, skipOnError });
    instance.get('/', async () => 'ok');
    expect((await instance.inject('/')).statusCode).toBe(status);
    await instance.close();
    redis.disconnect();
  });
});
