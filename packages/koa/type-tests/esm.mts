// An ESM app: default and named imports, koa-ratelimit mode and ratekit mode, a custom ratekit store.
import Koa from 'koa';
import { memoryStore, type RateLimitStore } from '@ratekit/core';
import ratelimit, { type HeaderNameOptions, ipKeyGenerator, type MiddlewareOptions, rateLimit, ratelimit as named, type RateLimitOptions } from '@ratekit/koa';

const app = new Koa();
app.use(ratelimit({ driver: 'memory', db: new Map(), duration: 60_000, max: 100 }));
app.use(named({ driver: 'memory', db: new Map(), id: (ctx) => ipKeyGenerator(ctx.ip) }));

// ratekit mode: an algorithm, IETF headers and a ratekit store.
const store: RateLimitStore = memoryStore();
const limited = rateLimit({ algorithm: 'token-bucket', duration: 60_000, max: 100, standardHeaders: 'draft-8', store });
app.use(limited);

const headers: HeaderNameOptions = { total: 'X-Limit' };
const options: MiddlewareOptions = { driver: 'memory', db: new Map(), headers };
const generic: RateLimitOptions<Koa.ParameterizedContext> = options;
app.use(ratelimit(generic));

// @ts-expect-error `id` is a function of the context
ratelimit({ driver: 'memory', db: new Map(), id: 'ip' });
// @ts-expect-error not an algorithm
rateLimit({ algorithm: 'leaky-faucet', max: 1 });
