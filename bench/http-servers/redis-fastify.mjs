// Fastify 5 for the flood and fleet parts: one limiter on Redis (or none, or ours on the memory
// store), named in argv[2]; see lib/redis-apps.mjs for the limiters and their settings.
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import fastifyRateLimit from '@fastify/rate-limit';
import { memoryStore } from '@ratekit/core';
import ratekitFastify from '@ratekit/fastify';
import { redisStore } from '@ratekit/redis';
import { appSettings, flexibleRedis, HEADERS_OFF, TOO_MANY, withoutRefusalCache } from '../lib/redis-apps.mjs';
import { HELLO, HOST, serveHttp } from '../lib/http-server.mjs';

serveHttp(async (limiter) => {
  const s = appSettings(limiter);
  const app = Fastify({ trustProxy: s.trustProxy ? '127.0.0.1' : false }); // the load generator, as the one proxy hop
  const ours = { max: s.limit, timeWindow: s.windowMs, algorithm: 'fixed-window' };
  switch (limiter) {
    case 'bare':
      break;
    case 'ratekit-memory':
      await app.register(ratekitFastify, { ...ours, store: memoryStore() });
      break;
    case 'ratekit-redis':
      await app.register(ratekitFastify, { ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }) });
      break;
    case 'ratekit-redis-noheaders':
      await app.register(ratekitFastify, { ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }), ...HEADERS_OFF.fastify });
      break;
    case 'ratekit-redis-nocache':
      await app.register(ratekitFastify, { ...ours, store: withoutRefusalCache(redisStore({ client: await s.redis(), prefix: s.prefix })) });
      break;
    case 'rlflex-redis': {
      const flexible = flexibleRedis(s, await s.redis());
      await app.register(
        fp(async (fastify) => {
          fastify.addHook('onRequest', async (request, reply) => {
            const { allowed, headers } = await flexible.consume(request.ip);
            reply.headers(headers);
            if (!allowed) return reply.code(429).send(TOO_MANY);
          });
        }),
      );
      break;
    }
    case 'incumbent-redis':
      await app.register(fastifyRateLimit, { max: s.limit, timeWindow: s.windowMs, redis: await s.redis(), nameSpace: s.prefix });
      break;
  }
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return {
    port: app.server.address().port,
    close: async () => {
      await app.close();
      await s.close();
    },
  };
});
