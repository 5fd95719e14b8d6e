import { sharedMemoryStore } from '@ratekit/test-utils';
import Fastify from 'fastify';
import fastifyRateLimit from './index.js';

const T0 = 1_795_262_400_000;

describe('refusals answered in-process (refusalCache, ratekit mode)', () => {
  it.each([
    [undefined, 2],
    [false, 4],
  ] as const)('refusalCache %p: %i store calls for one admission and three refusals; the same answer each time', async (refusalCache, calls) => {
    const store = sharedMemoryStore();
    const app = Fastify();
    await app.register(fastifyRateLimit, { max: 1, timeWindow: 60_000, store, now: () => T0, ...(refusalCache === undefined ? {} : { refusalCache }) });
    app.get('/', async () => 'ok');
    expect((await app.inject('/')).statusCode).toBe(200);
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const { statusCode, body, headers } = await app.inject('/');
      answers.push({ statusCode, body, headers: { ...headers, date: undefined } });
    }
    expect(store.calls).toHaveLength(calls);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ statusCode: 429 });
    await app.close();
  });
});

describe('cached refusals on a moving clock, default headers (issue 31 §2: answered synchronously, headers reused while unchanged)', () => {
  it('every answer, status, body and headers, is the one the same app gives with the cache off', async () => {
    const clock = { nowMs: T0 + 0.5 };
    const build = async (refusalCache: boolean) => {
      const store = sharedMemoryStore();
      const app = Fastify();
      await app.register(fastifyRateLimit, { max: 2, timeWindow: 2_000, algorithm: 'fixed-window', store, refusalCache, now: () => clock.nowMs });
      app.get('/', async () => 'ok');
      return { app, store };
    };
    const cached = await build(true);
    const direct = await build(false);
    const answer = async (app: typeof cached.app) => {
      const { statusCode, body, headers } = await app.inject('/');
      return { statusCode, body, headers: { ...headers, date: undefined } };
    };
    for (const dt of [0, 0, 0, 1, 10, 300, 500, 189, 1, 999, 1, 0, 0, 750, 1_249, 2, 5_000, 0, 0, 0, 1_000.25]) {
      clock.nowMs += dt;
      expect(await answer(cached.app)).toEqual(await answer(direct.app));
    }
    expect(cached.store.calls.length).toBeLessThan(direct.store.calls.length);
    await Promise.all([cached.app.close(), direct.app.close()]);
  });
});
