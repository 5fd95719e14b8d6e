// Fastify 5 with @fastify/rate-limit 11 and its defaults (global, in-memory LocalStore, client IP key, x-ratelimit-* headers).
import Fastify from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { HELLO, HOST, limitOf, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const app = Fastify();
  await app.register(rateLimit, { max: limitOf(scenario), timeWindow: WINDOW_MS });
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
