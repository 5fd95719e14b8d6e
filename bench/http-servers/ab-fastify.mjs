// A/B server of lib/http-ab.mjs for fastify: `bare`, `rlflex-<pass|reject>` (lib/http-rlflex.mjs), or
// `<new|old>-<compat|core>-<pass|reject>`: the built @ratekit/fastify (`new`) or the build at $BENCH_AB_OLD (`old`),
// in incumbent-compat mode (the incumbent's options only) or ratekit mode (plus `algorithm: 'fixed-window'`).
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import newF from '@ratekit/fastify';
import { flexibleLimiter, TOO_MANY } from '../lib/http-rlflex.mjs';
import { HELLO, HOST, limitOf, serveHttp, WINDOW_MS } from '../lib/http-server.mjs';
const oldF = process.env.BENCH_AB_OLD ? (await import(process.env.BENCH_AB_OLD)).default : undefined;

serveHttp(async (arg) => {
  const app = Fastify();
  const [a, b, c] = arg.split('-');
  if (a === 'rlflex') {
    const { limiter, headers } = flexibleLimiter(limitOf(b));
    await app.register(
      fp(async (fastify) => {
        fastify.addHook('onRequest', async (request, reply) => {
          try {
            reply.headers(headers(await limiter.consume(request.ip), false));
          } catch (r) {
            if (r instanceof Error) throw r;
            reply.headers(headers(r, true));
            return reply.code(429).send(TOO_MANY);
          }
        });
      }),
    );
  } else if (a !== 'bare') {
    const opts = { max: limitOf(c), timeWindow: WINDOW_MS };
    if (b === 'core') opts.algorithm = 'fixed-window';
    await app.register(a === 'old' ? oldF : newF, opts);
  }
  app.get('/', async () => HELLO);
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
});
