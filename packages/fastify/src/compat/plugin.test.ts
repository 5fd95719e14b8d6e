import Fastify, { type FastifyInstance, type FastifyPluginCallback, type FastifyRequest, type LightMyRequestResponse } from 'fastify';
import fastifyRateLimit from '../index.js';

// The incumbent, loaded untyped: its type declarations augment Fastify's and would clash with ours.
const upstream = require('@fastify/rate-limit') as FastifyPluginCallback<Record<string, unknown>>;

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);

beforeEach(() => {
  jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  jest.useRealTimers();
});

type Routes = (app: FastifyInstance) => void;
const plain: Routes = (app) => {
  app.get('/', async () => 'ok');
};

/** Two apps given the same options and routes: one with @fastify/rate-limit 11, one with @ratekit/fastify. */
async function pair(options: Record<string, unknown>, routes: Routes = plain, factory: Record<string, unknown> = {}) {
  const build = async (plugin: unknown) => {
    const app = Fastify(factory);
    await app.register(plugin as FastifyPluginCallback<Record<string, unknown>>, options);
    routes(app);
    await app.ready();
    return app;
  };
  return { theirs: await build(upstream), ours: await build(fastifyRateLimit) };
}

/** What a client sees of a response: status, rate-limit headers and body bytes. */
function seen(res: LightMyRequestResponse) {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => /ratelimit|retry-after/.test(name)));
  return { status: res.statusCode, headers, body: res.body };
}

/**
 * Sends the same requests to both apps at the same fixed times (seconds from T0) and expects the
 * same answers, byte for byte; returns ours, for a reader to see what the timeline was.
 */
async function sameTimeline(
  apps: { theirs: FastifyInstance; ours: FastifyInstance },
  steps: Array<[number, string | { url: string; method?: 'GET' | 'HEAD' | 'POST'; headers?: Record<string, string> }]>,
) {
  const answers = [];
  for (const [seconds, request] of steps) {
    jest.setSystemTime(T0 + seconds * 1000);
    const theirs = seen(await apps.theirs.inject(request));
    const ours = seen(await apps.ours.inject(request));
    expect({ at: seconds, ...ours }).toEqual({ at: seconds, ...theirs });
    answers.push(ours);
  }
  await Promise.all([apps.theirs.close(), apps.ours.close()]);
  return answers;
}

describe('a registration with only @fastify/rate-limit 11 options answers as @fastify/rate-limit does', () => {
  it('the default 429: headers and the body, byte for byte', async () => {
    const answers = await sameTimeline(await pair({ max: 2, timeWindow: '1 minute' }), [
      [0, '/'],
      [1, '/'],
      [2, '/'],
      [61, '/'],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 200]);
    expect(answers[2]!.body).toBe('{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded, retry in 58 seconds"}');
    expect(answers[2]!.headers).toEqual({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '58', 'retry-after': '58' });
  });

  it.each([
    ['enableDraftSpec', { max: 2, timeWindow: 10_000, enableDraftSpec: true }],
    ['continueExceeding', { max: 2, timeWindow: 10_000, continueExceeding: true }],
    ['exponentialBackoff', { max: 2, timeWindow: 10_000, exponentialBackoff: true }],
    ['ban: 1 (403 after one more refusal)', { max: 1, timeWindow: 10_000, ban: 1 }],
    ['addHeaders / addHeadersOnExceeding switched off', { max: 1, timeWindow: 10_000, addHeaders: { 'retry-after': false }, addHeadersOnExceeding: { 'x-ratelimit-reset': false } }],
    ['max and timeWindow as async functions', { max: async () => 2, timeWindow: async () => 5_000 }],
    ['a NaN max and a negative timeWindow fall back to 1000 per minute', { max: Number.NaN, timeWindow: -5 }],
    ['errorResponseBuilder', { max: 1, timeWindow: 10_000, errorResponseBuilder: (_req: FastifyRequest, ctx: object) => ({ statusCode: 429, context: ctx }) }],
    ['errorResponseBuilder returning undefined (Fastify answers 500)', { max: 1, timeWindow: 10_000, errorResponseBuilder: () => undefined }],
    ['allowList as an array', { max: 1, timeWindow: 10_000, allowList: ['127.0.0.1'] }],
  ])('%s', async (_name, options) => {
    await sameTimeline(await pair(options), [
      [0, '/'],
      [1, '/'],
      [2, '/'],
      [3, '/'],
      [4, '/'],
      [9, '/'],
      [12, '/'],
      [25, '/'],
      [60, '/'],
    ]);
  });

  it('routes with a groupId (each its own store, as upstream), on a preHandler hook, with onExceeding/onExceeded called as upstream calls them', async () => {
    const calls = { theirs: [] as string[], ours: [] as string[] };
    const build = async (plugin: unknown, log: string[]) => {
      const app = Fastify();
      await app.register(plugin as FastifyPluginCallback<Record<string, unknown>>, {
        max: 2,
        timeWindow: 10_000,
        hook: 'preHandler',
        onExceeding: (_req: FastifyRequest, key: string) => log.push(`exceeding ${key}`),
        onExceeded: (_req: FastifyRequest, key: string) => log.push(`exceeded ${key}`),
      });
      app.get('/a', { config: { rateLimit: { groupId: 'g' } } }, async () => 'a');
      app.get('/b', { config: { rateLimit: { groupId: 'g' } } }, async () => 'b');
      app.get('/c', async () => 'c');
      await app.ready();
      return app;
    };
    const apps = { theirs: await build(upstream, calls.theirs), ours: await build(fastifyRateLimit, calls.ours) };
    const answers = await sameTimeline(apps, [
      [0, '/a'],
      [1, '/b'],
      [2, '/a'],
      [3, '/c'],
      [4, '/c'],
      [5, '/c'],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(calls.ours).toEqual(calls.theirs);
  });

  it("the plugin's `cache` bounds only the plugin's store: a route's own limit keeps 5 000 keys unless the route sets `cache`, as upstream", async () => {
    const get = (url: string, client: string) => ({ url, headers: { 'x-client': client } });
    const apps = await pair({ cache: 1, max: 1, timeWindow: 10_000, keyGenerator: (req: FastifyRequest) => req.headers['x-client'] }, (app) => {
      app.get('/plain', async () => 'plain');
      app.get('/own', { config: { rateLimit: { max: 1 } } }, async () => 'own');
      app.get('/small', { config: { rateLimit: { max: 1, cache: 1 } } }, async () => 'small');
    });
    const answers = await sameTimeline(apps, [
      [0, get('/plain', 'a')],
      [0, get('/plain', 'b')], // evicts a from the plugin's store (1 key)
      [0, get('/plain', 'a')],
      [0, get('/own', 'a')],
      [0, get('/own', 'b')], // the route's store holds 5 000 keys: a stays
      [0, get('/own', 'a')],
      [0, get('/small', 'a')],
      [0, get('/small', 'b')], // the route's own `cache: 1`
      [0, get('/small', 'a')],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 200, 200, 200]);
  });
  it('a per-route limit counts GET and its automatic HEAD route apart, as upstream does', async () => {
    const routes: Routes = (app) => {
      app.get('/items', { config: { rateLimit: { max: 1, timeWindow: 10_000 } } }, async () => 'items');
    };
    const answers = await sameTimeline(await pair({ global: false }, routes), [
      [0, '/items'],
      [0, { url: '/items', method: 'HEAD' }],
      [0, '/items'],
      [0, { url: '/items', method: 'HEAD' }],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 429]);
  });

  it('allowList(request, key) receives the key as keyGenerator returned it: a number stays a number', async () => {
    const keys: unknown[] = [];
    const app = Fastify();
    await app.register(fastifyRateLimit, {
      max: 1,
      keyGenerator: () => 42,
      allowList: (_request: FastifyRequest, key: unknown) => {
        keys.push(key);
        return false;
      },
    } as never);
    app.get('/', async () => 'ok');
    await app.inject('/');
    expect(keys).toEqual([42]);
    await app.close();
  });

  it('createRateLimit() answers exactly upstream’s result shape', async () => {
    const results: Record<string, unknown[]> = {};
    for (const [name, plugin] of [
      ['theirs', upstream],
      ['ours', fastifyRateLimit],
    ] as const) {
      const app = Fastify();
      await app.register(plugin as FastifyPluginCallback<Record<string, unknown>>, { global: false });
      const check = (app as unknown as { createRateLimit(o: object): (r: FastifyRequest, o?: object) => Promise<unknown> }).createRateLimit({ max: 1, timeWindow: 1_000 });
      app.get('/', async (request) => [await check(request, { increment: false }), await check(request), await check(request)]);
      results[name] = (await app.inject('/')).json();
      await app.close();
    }
    expect(results.ours).toEqual(results.theirs);
    expect(Object.keys(results.ours![2] as object)).toEqual(['isAllowed', 'key', 'max', 'timeWindow', 'remaining', 'ttl', 'ttlInSeconds', 'isExceeded', 'isBanned']);
  });

  it('warns through Fastify’s logger when an option value falls back to its default (upstream falls back in silence)', async () => {
    const lines: string[] = [];
    const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => lines.push(line) } } });
    await app.register(fastifyRateLimit, { max: -1, timeWindow: 'soon' } as never);
    app.get('/', async () => 'ok');
    expect((await app.inject('/')).headers['x-ratelimit-limit']).toBe('1000');
    await app.close();
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([
      '[@ratekit/fastify] `max` should be a finite number >= 0 or a function, got -1: using the default, 1000 (as @fastify/rate-limit does)',
      '[@ratekit/fastify] `timeWindow` should be a finite number of ms >= 0, a duration string such as \'1 minute\', or a function, got "soon": using the default, 60000 (as @fastify/rate-limit does)',
    ]);
  });

  it('refuses a ratekit-only option on a route of a @fastify/rate-limit registration, naming it', async () => {
    const app = Fastify();
    await app.register(fastifyRateLimit, { max: 5 });
    expect(() => app.get('/', { config: { rateLimit: { limits: { limit: 1, windowMs: 1_000 } } } }, async () => 'ok')).toThrow(
      expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'config.rateLimit.limits' }),
    );
    await app.close();
  });

  it('takes @fastify/rate-limit’s own LocalStore class as `store`, unchanged', async () => {
    const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (...args: unknown[]) => object;
    // Upstream builds a `store` class as `new Store(options)`; a user's subclass gives LocalStore its own arguments.
    class Store extends LocalStore {
      constructor() {
        super(false, false, 100);
      }
    }
    const answers = await sameTimeline(await pair({ max: 2, timeWindow: 10_000, store: Store }), [
      [0, '/'],
      [1, '/'],
      [2, '/'],
      [11, '/'],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 200]);
  });

  it.each([
    [false, 500],
    [true, 200],
  ])('a store that never answers fails the call after storeTimeoutMs instead of hanging (skipOnError: %s → %i)', async (skipOnError, status) => {
    class SilentStore {
      incr() {}
      child() {
        return this;
      }
    }
    const app = Fastify();
    await app.register(fastifyRateLimit, { max: 1, store: SilentStore, skipOnError, storeTimeoutMs: 50 } as never);
    app.get('/', async () => 'ok');
    expect((await app.inject('/')).statusCode).toBe(status);
    await app.close();
  });
});
