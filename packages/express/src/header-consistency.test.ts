// Ratekit mode's rate-limit headers agree with each other on every response (issue 38 §3; the rule is
// @ratekit/test-utils' checkAdapterHeaderConsistency).
import { checkAdapterHeaderConsistency } from '@ratekit/test-utils';
import express from 'express';
import request from 'supertest';
import { rateLimit } from './index.js';

it('sends rate-limit headers that agree with each other, for every algorithm and header set', async () => {
  await checkAdapterHeaderConsistency((options) => {
    const app = express()
      .use(rateLimit(options))
      .get('/', (_req, res) => res.send('ok'));
    return async () => {
      const response = await request(app).get('/');
      return { status: response.status, get: (name) => response.headers[name] };
    };
  });
});
