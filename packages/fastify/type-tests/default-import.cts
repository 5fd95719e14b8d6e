// A CommonJS file written with ES import syntax (compiled to require()): default, named and namespace imports.
import Fastify from 'fastify';
import fastifyRateLimit, { fastifyRateLimit as named, normalizeIP, type RateLimitOptions } from '@ratekit/fastify';
import * as everything from '@ratekit/fastify';

const app = Fastify();
void app.register(fastifyRateLimit, { max: 10 });
void app.register(named, { global: false });
void app.register(everything.default, { global: false });
const route: RateLimitOptions = { max: 2, keyGenerator: (request) => normalizeIP(request.ip) };
app.get('/', { config: { rateLimit: route } }, async () => 'ok');

// @ts-expect-error `timeWindow` is ms, a duration string or a function
void app.register(fastifyRateLimit, { timeWindow: true });
