// Ratekit mode's rate-limit headers agree with each other on every response (issue 38 §3; the rule is
// @ratekit/test-utils' checkAdapterHeaderConsistency).
import { checkAdapterHeaderConsistency } from '@ratekit/test-utils';
import Koa from 'koa';
import request from 'supertest';
import { ratelimit } from './index.js';

it('sends rate-limit headers that agree with each other, for every algorithm and header set', async () => {
  await checkAdapterHeaderConsistency((options) => {
    const app = new Koa().use(ratelimit(options)).use((ctx) => {
      ctx.body = 'ok';
    });
    const server = app.callback();
    return async () => {
      const response = await request(server).get('/');
      return { status: response.status, get: (name) => response.headers[name] };
    };
  });
});
