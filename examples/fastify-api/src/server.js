// Starts the example API. PORT (default 3000; 0 picks a free port) and HOST (default 127.0.0.1).
// When started with an IPC channel (as examples/express-api's demo starts its server), it reports its port with process.send.
import { buildApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const app = await buildApp({ logger: process.env.LOG === '1' });
try {
  await app.listen({ host, port });
} catch (error) {
  console.error(`fastify-api could not start: ${error.message}`);
  process.exit(1);
}
const address = app.server.address();
const actual = typeof address === 'object' && address !== null ? address.port : port;
console.log(`fastify-api listening on http://${host}:${actual}`);
process.send?.({ listening: actual });

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
