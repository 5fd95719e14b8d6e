// Fastify 5 with @ratekit/fastify (the built package), with the same options
// as fastify-fastify-rate-limit.mjs, as a user migrating keeps them: global,
// in-memory store, client IP key, x-ratelimit-* headers (the default),
// 429 through Fastify's error handling.
import Fastify from 'fastify';
import fastifyRateLimit from '@ratekit/fastify';
import { HELLO, HOST, limitOf, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const app = Fastify();
  await app.register(fastifyRateLimit, { max: limitOf(scenario), timeWindow: WINDOW_MS });
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
