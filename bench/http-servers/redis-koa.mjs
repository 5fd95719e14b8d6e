// Koa 3 for the flood and fleet parts: one limiter on Redis (or none, or ours on the memory
// store), named in argv[2]; see lib/redis-apps.mjs for the limiters and their settings.
import Koa from 'koa';
import koaRatelimit from 'koa-ratelimit';
import { memoryStore } from '@ratekit/core';
import { ratelimit } from '@ratekit/koa';
import { redisStore } from '@ratekit/redis';
import { appSettings, flexibleRedis, HEADERS_OFF, TOO_MANY, withoutRefusalCache } from '../lib/redis-apps.mjs';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp(async (limiter) => {
  const s = appSettings(limiter);
  const app = new Koa();
  app.proxy = s.trustProxy;
  const ours = { duration: s.windowMs, max: s.limit, algorithm: 'fixed-window' };
  switch (limiter) {
    case 'bare':
      break;
    case 'ratekit-memory':
      app.use(ratelimit({ ...ours, store: memoryStore() }));
      break;
    case 'ratekit-redis':
      app.use(ratelimit({ ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }) }));
      break;
    case 'ratekit-redis-noheaders':
      app.use(ratelimit({ ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }), ...HEADERS_OFF.koa }));
      break;
    case 'ratekit-redis-nocache':
      app.use(ratelimit({ ...ours, store: withoutRefusalCache(redisStore({ client: await s.redis(), prefix: s.prefix })) }));
      break;
    case 'rlflex-redis': {
      const flexible = flexibleRedis(s, await s.redis());
      app.use(async (ctx, next) => {
        const { allowed, headers } = await flexible.consume(ctx.ip);
        ctx.set(headers);
        if (allowed) return next();
        ctx.status = 429;
        ctx.body = TOO_MANY;
      });
      break;
    }
    case 'incumbent-redis':
      app.use(koaRatelimit({ driver: 'redis', db: await s.redis(), duration: s.windowMs, max: s.limit, namespace: s.prefix.slice(0, -1) }));
      break;
  }
  app.use((ctx) => {
    ctx.body = HELLO;
  });
  const server = await listenNode(app.callback());
  return {
    port: server.port,
    close: async () => {
      await server.close();
      await s.close();
    },
  };
});
