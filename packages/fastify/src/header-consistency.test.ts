// Ratekit mode's rate-limit headers agree with each other on every response (issue 38 §3; the rule is
// @ratekit/test-utils' checkAdapterHeaderConsistency).
import { checkAdapterHeaderConsistency } from '@ratekit/test-utils';
import Fastify from 'fastify';
import fastifyRateLimit from './index.js';

it('sends rate-limit headers that agree with each other, for every algorithm and header set', async () => {
  const apps: ReturnType<typeof Fastify>[] = [];
  try {
    await checkAdapterHeaderConsistency(async (options) => {
      const app = Fastify();
      apps.push(app);
      await app.register(fastifyRateLimit, options);
      app.get('/', () => 'ok');
      await app.ready();
      return async () => {
        const response = await app.inject({ method: 'GET', url: '/' });
        return { status: response.statusCode, get: (name) => response.headers[name] as string | undefined };
      };
    });
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
});
