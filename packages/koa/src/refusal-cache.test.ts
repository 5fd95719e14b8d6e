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

describe('cached refusals on a moving clock, default headers (issue 31 §2: answered synchronously, headers reused while unchanged)', () => {
  it('every answer, status, body and headers, is the one the same app gives with the cache off', async () => {
    const clock = { nowMs: T0 + 0.5 };
    const build = (refusalCache: boolean) => {
      const store = sharedMemoryStore();
      const app = new Koa();
      app.use(ratelimit({ duration: 2_000, max: 2, algorithm: 'fixed-window', store, refusalCache, now: () => clock.nowMs }));
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      return { listener: app.callback(), store };
    };
    const cached = build(true);
    const direct = build(false);
    const answer = async (listener: ReturnType<Koa['callback']>) => {
      const { status, text, headers } = await request(listener).get('/');
      const { date: _date, ...rest } = headers;
      return { status, text, headers: rest };
    };
    for (const dt of [0, 0, 0, 1, 10, 300, 500, 189, 1, 999, 1, 0, 0, 750, 1_249, 2, 5_000, 0, 0, 0, 1_000.25]) {
      clock.nowMs += dt;
      expect(await answer(cached.listener)).toEqual(await answer(direct.listener));
    }
    expect(cached.store.calls.length).toBeLessThan(direct.store.calls.length);
  });
});
