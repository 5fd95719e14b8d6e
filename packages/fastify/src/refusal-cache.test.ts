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
