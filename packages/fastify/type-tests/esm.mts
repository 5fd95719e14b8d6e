// An ESM app: default and named imports, a custom store typed against @fastify/rate-limit's contract,
// http2, the hook called as @fastify/rate-limit's async hook, and createRateLimit().
import * as http2 from 'node:http2';
import Fastify, { type FastifyInstance, type preHandlerAsyncHookHandler, type RouteOptions } from 'fastify';
import fastifyRateLimit, {
  type CreateRateLimitOptions,
  type FastifyRateLimitOptions,
  type FastifyRateLimitStore,
  fastifyRateLimit as named,
  normalizeIP,
  type RateLimitPluginOptions,
  type StoreCallback,
} from '@ratekit/fastify';

/** A store written against @fastify/rate-limit 11's declarations. */
class CountingStore implements FastifyRateLimitStore {
  readonly counts = new Map<string, number>();
  constructor(readonly options: FastifyRateLimitOptions) {}
  incr(key: string, callback: StoreCallback, timeWindow: number, _max: number): void {
    const current = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, current);
    callback(null, { current, ttl: timeWindow });
  }
  child(_routeOptions: RouteOptions & { path: string; prefix: string }): CountingStore {
    return new CountingStore(this.options);
  }
}

const app = Fastify();
const plugin: RateLimitPluginOptions = { store: CountingStore, max: 10, timeWindow: 60_000 };
await app.register(fastifyRateLimit, plugin);
await app.register(named, { global: false, allowList: (_req, key) => key === normalizeIP('::1') });

const hook: preHandlerAsyncHookHandler = app.rateLimit({ max: 1 });
app.get('/call', async (request, reply) => {
  await hook.call(app, request, reply);
  return 'checked';
});

const checkOptions: CreateRateLimitOptions = { store: CountingStore, max: 5, timeWindow: '1 minute' };
const check = app.createRateLimit(checkOptions);
app.get('/check', async (request) => {
  const result = await check(request, { increment: false });
  return result.isAllowed ? 'allow-listed' : { exceeded: result.isExceeded, remaining: result.remaining };
});

const h2: FastifyInstance<http2.Http2SecureServer, http2.Http2ServerRequest, http2.Http2ServerResponse> = Fastify({ http2: true, https: { allowHTTP1: true } });
await h2.register(fastifyRateLimit, { max: 10 });
h2.route({ method: 'GET', url: '/', preHandler: h2.rateLimit({ max: 1 }), handler: async () => 'h2' });

// @ts-expect-error a store class needs incr() and child()
void app.register(fastifyRateLimit, { store: class {} });
// @ts-expect-error the result of a check is a promise
check(app as never).isAllowed;
