// Fastify 5, bare (`bare`), with one empty onRequest hook registered as a plugin (`noop`), or with the
// minimal limiter of lib/http-minimal.mjs in such a hook (`minimal`).
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, HOST, serveHttp } from '../lib/http-server.mjs';

const noop = fp(async (fastify) => {
  fastify.addHook('onRequest', (_request, _reply, done) => done());
});

// The floor: core's limiter and the legacy headers. A refusal goes to Fastify's error handling
// as a premade Error with statusCode 429, as @fastify/rate-limit's and ours do (an app's
// setErrorHandler sees it): what that path costs beside a route's 200 is the refusal's floor.
const minimal = (limit) =>
  fp(async (fastify) => {
    const decide = minimalLimiter(limit);
    const refusal = Object.assign(new Error('Too many requests'), { statusCode: 429 });
    fastify.addHook('onRequest', (request, reply, done) => {
      const { allowed, headers } = decide(request.ip);
      for (const [name, value] of headers) reply.header(name, value);
      done(allowed ? undefined : refusal);
    });
  });

serveHttp(async (scenario) => {
  const app = Fastify();
  if (scenario === 'noop') await app.register(noop);
  else if (scenario === 'minimal') await app.register(minimal());
  else if (scenario === 'minimal-reject') await app.register(minimal(1));
  else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
