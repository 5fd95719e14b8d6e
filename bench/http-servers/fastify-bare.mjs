// Fastify 5, bare (`bare`), with one empty onRequest hook registered as a plugin (`noop`), or with the
// minimal limiter of lib/http-minimal.mjs in such a hook (`minimal`).
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { minimalLimiter } from '../lib/http-minimal.mjs';
import { HELLO, HOST, serveHttp } from '../lib/http-server.mjs';

const noop = fp(async (fastify) => {
  fastify.addHook('onRequest', (_request, _reply, done) => done());
});

const minimal = fp(async (fastify) => {
  const decide = minimalLimiter();
  fastify.addHook('onRequest', (request, reply, done) => {
    for (const [name, value] of decide(request.ip)) reply.header(name, value);
    done();
  });
});

serveHttp(async (scenario) => {
  const app = Fastify();
  if (scenario === 'noop') await app.register(noop);
  else if (scenario === 'minimal') await app.register(minimal);
  else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
