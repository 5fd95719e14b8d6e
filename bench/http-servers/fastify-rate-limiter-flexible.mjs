// Fastify 5 with rate-limiter-flexible as a minimal onRequest hook in a plugin (its wiki has no
// Fastify page; this is its Koa middleware as a Fastify hook: `await consume(request.ip)`, 429 on
// rejection), plus the README's headers (lib/http-rlflex.mjs).
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, HOST, limitOf, serveHttp } from '../lib/http-server.mjs';

serveHttp(async (scenario) => {
  const { limiter, headers } = flexibleLimiter(limitOf(scenario));
  const app = Fastify();
  await app.register(
    fp(async (fastify) => {
      fastify.addHook('onRequest', async (request, reply) => {
        try {
          reply.headers(headers(await limiter.consume(request.ip), false));
        } catch (rlRes) {
          if (rlRes instanceof Error) throw rlRes;
          reply.headers(headers(rlRes, true));
          return reply.code(429).send(TOO_MANY);
        }
      });
    }),
  );
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
