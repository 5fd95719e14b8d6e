import { sharedMemoryStore } from '@ratekit/test-utils';
import Koa from 'koa';
import request from 'supertest';
import { ratelimit } from './rate-limit.js';

const T0 = 1_795_262_400_000;

describe('refusals answered in-process (refusalCache, ratekit mode)', () => {
  it.each([
    [undefined, 2],
    [false, 4],
  ] as const)('refusalCache %p: %i store calls for one admission and three refusals; the same answer each time', async (refusalCache, calls) => {
    const store = sharedMemoryStore();
    const app = new Koa();
    app.use(ratelimit({ limits: { limit: 1, windowMs: 60_000 }, store, now: () => T0, standardHeaders: 'draft-7', ...(refusalCache === undefined ? {} : { refusalCache }) }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const http = () => request(app.callback()).get('/');
    await http().expect(200);
    const answers = [await http(), await http(), await http()].map((r) => ({ status: r.status, text: r.text, ratelimit: r.headers['ratelimit'], retry: r.headers['retry-after'] }));
    expect(store.calls).toHaveLength(calls);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ status: 429, retry: '60' });
  });
});
