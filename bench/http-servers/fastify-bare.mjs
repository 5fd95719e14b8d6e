// Fastify 5, bare (`bare`) or with one empty onRequest hook registered as a plugin (`noop`).
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { HELLO, HOST, serveHttp } from '../lib/http-server.mjs';

const noop = fp(async (fastify) => {
  fastify.addHook('onRequest', (_request, _reply, done) => done());
});

serveHttp(async (scenario) => {
  const app = Fastify();
  if (scenario === 'noop') await app.register(noop);
  else if (scenario !== 'bare') throw new Error(`unknown scenario ${scenario}`);
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
