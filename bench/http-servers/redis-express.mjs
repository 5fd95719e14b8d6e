// Express 5 for the flood and fleet parts: one limiter on Redis (or none, or ours on the memory
// store), named in argv[2]; see lib/redis-apps.mjs for the limiters and their settings.
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { memoryStore } from '@ratekit/core';
import { rateLimit } from '@ratekit/express';
import { redisStore } from '@ratekit/redis';
import { appSettings, flexibleRedis, HEADERS_OFF, TOO_MANY, withoutRefusalCache } from '../lib/redis-apps.mjs';
import { HELLO, listenNode, serveHttp } from '../lib/http-server.mjs';

serveHttp(async (limiter) => {
  const s = appSettings(limiter);
  const app = express();
  if (s.trustProxy) app.set('trust proxy', 'loopback'); // the load generator, as the one proxy hop
  const ours = { windowMs: s.windowMs, limit: s.limit, algorithm: 'fixed-window' };
  switch (limiter) {
    case 'bare':
      break;
    case 'ratekit-memory':
      app.use(rateLimit({ ...ours, store: memoryStore() }));
      break;
    case 'ratekit-redis':
      app.use(rateLimit({ ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }) }));
      break;
    case 'ratekit-redis-noheaders':
      app.use(rateLimit({ ...ours, store: redisStore({ client: await s.redis(), prefix: s.prefix }), ...HEADERS_OFF.express }));
      break;
    case 'ratekit-redis-nocache':
      app.use(rateLimit({ ...ours, store: withoutRefusalCache(redisStore({ client: await s.redis(), prefix: s.prefix })) }));
      break;
    case 'rlflex-redis': {
      const flexible = flexibleRedis(s, await s.redis());
      app.use((req, res, next) => {
        flexible.consume(req.ip).then(({ allowed, headers }) => {
          res.set(headers);
          if (allowed) next();
          else res.status(429).send(TOO_MANY);
        }, next);
      });
      break;
    }
    case 'incumbent-redis': {
      const client = await s.redis();
      const store = new RedisStore({ sendCommand: (command, ...args) => client.call(command, ...args), prefix: s.prefix });
      app.use(expressRateLimit({ windowMs: s.windowMs, limit: s.limit, store }));
      break;
    }
  }
  app.get('/', (_req, res) => {
    res.send(HELLO);
  });
  const server = await listenNode(app);
  return {
    port: server.port,
    close: async () => {
      await server.close();
      await s.close();
    },
  };
});
