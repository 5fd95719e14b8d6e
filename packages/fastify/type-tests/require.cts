// A CommonJS app: `require('@ratekit/fastify')` is the plugin itself, carrying the named exports.
import http2 = require('node:http2');
import Fastify = require('fastify');
import fastifyRateLimit = require('@ratekit/fastify');

const app = Fastify();
void app.register(fastifyRateLimit, { max: 100, timeWindow: '1 minute' });
void app.register(fastifyRateLimit.default, { global: false });
void app.register(fastifyRateLimit.fastifyRateLimit, { max: 5, timeWindow: 1_000, keyGenerator: (req) => fastifyRateLimit.normalizeIP(req.ip, 56) });

app.get('/', { config: { rateLimit: { max: 3, timeWindow: '10s' } } }, async () => 'limited');
app.get('/free', { config: { rateLimit: false } }, async () => 'free');
app.get('/hooked', { preHandler: app.rateLimit({ max: 2 }) }, async () => 'hooked');

// An http2 instance keeps its type parameters through the decorators.
const h2: Fastify.FastifyInstance<http2.Http2Server, http2.Http2ServerRequest, http2.Http2ServerResponse> = Fastify({ http2: true });
void h2.register(fastifyRateLimit, { max: 10 });
h2.get('/h2', { preHandler: h2.rateLimit() }, async () => 'h2');

const options: fastifyRateLimit.RateLimitPluginOptions = { max: 1, hook: 'preHandler' };
const context: fastifyRateLimit.errorResponseBuilderContext = { statusCode: 429, ban: false, after: '1 second', max: 1, ttl: 1_000 };
void options;
void context;

// @ts-expect-error `hook` names a lifecycle stage
void app.register(fastifyRateLimit, { hook: 'onSend' });
// @ts-expect-error `max` is a number or a function
void app.register(fastifyRateLimit, { max: '100' });
