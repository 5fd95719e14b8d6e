// Ratekit mode's rate-limit headers agree with each other on every response (issue 38 §3; the rule is
// @ratekit/test-utils' checkAdapterHeaderConsistency).
import { checkAdapterHeaderConsistency } from '@ratekit/test-utils';
import { Hono } from 'hono';
import { rateLimit } from './index.js';

const getConnInfo = () => ({ remote: { address: '203.0.113.7' } });

it('sends rate-limit headers that agree with each other, for every algorithm and header set', async () => {
  await checkAdapterHeaderConsistency((options) => {
    const app = new Hono().use(rateLimit({ ...options, getConnInfo })).get('/', (c) => c.text('ok'));
    return async () => {
      const response = await app.request('/');
      return { status: response.status, get: (name) => response.headers.get(name) };
    };
  });
});
