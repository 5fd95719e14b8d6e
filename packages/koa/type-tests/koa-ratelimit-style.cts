// Typed usage in the style of DefinitelyTyped's koa-ratelimit-tests.ts (written for @ratekit/koa):
// a CommonJS app that calls the module itself, on both of koa-ratelimit's drivers.
import Koa = require('koa');
import { Redis } from 'ioredis';
import ratelimit = require('@ratekit/koa');

const app = new Koa();
const redis = new Redis({ host: '127.0.0.1', lazyConnect: true });

app.use(ratelimit({ driver: 'redis', db: redis }));
app.use(ratelimit({ driver: 'redis', db: redis, namespace: 'limit:api', duration: 60_000, max: 100 }));
app.use(ratelimit({ driver: 'memory', db: new Map() }));
app.use(
  ratelimit({
    driver: 'memory',
    db: new Map(),
    namespace: 'limit:login',
    errorMessage: 'Sometimes You Just Have to Slow Down.',
    id: (ctx) => ctx.ip,
    headers: { remaining: 'Rate-Limit-Remaining', reset: 'Rate-Limit-Reset', total: 'Rate-Limit-Total' },
    disableHeader: false,
    whitelist: (ctx) => ctx.path === '/health',
    blacklist: async (ctx) => Promise.resolve(ctx.ip === '192.0.2.1'),
    throw: true,
  }),
);

const headers: ratelimit.HeaderNameOptions = { remaining: 'X-Left', reset: 'X-Reset', total: 'X-Total' };
const options: ratelimit.MiddlewareOptions = { driver: 'memory', db: new Map(), headers, max: 10 };
app.use(ratelimit(options));

app.use(async (ctx) => {
  ctx.body = 'Hello';
});

// @ts-expect-error koa-ratelimit has two drivers, 'redis' and 'memory'
ratelimit({ driver: 'memcached', db: new Map() });
// @ts-expect-error `duration` is in milliseconds, a number
ratelimit({ driver: 'memory', db: new Map(), duration: '1h' });
