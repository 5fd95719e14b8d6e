// Starts the example API. PORT (default 3000; 0 picks a free port), HOST (default 127.0.0.1),
// NEST_PLATFORM (express, the default, or fastify), LOG=1 for Nest's logger.
// When started with an IPC channel (as examples/demo.mjs starts it), it reports its port with process.send.
import { createApp, type Platform } from './app.js';

async function bootstrap(): Promise<void> {
  const host = process.env.HOST ?? '127.0.0.1';
  const port = Number(process.env.PORT ?? 3000);
  const platform = (process.env.NEST_PLATFORM ?? 'express') as Platform;
  if (platform !== 'express' && platform !== 'fastify') throw new Error(`NEST_PLATFORM must be express or fastify, got ${JSON.stringify(platform)}`);

  const app = await createApp({ platform, logger: process.env.LOG === '1' });
  app.enableShutdownHooks(['SIGINT', 'SIGTERM']);
  await app.listen(port, host);
  const address = app.getHttpServer().address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`nestjs-api (${platform}) listening on http://${host}:${actual}`);
  process.send?.({ listening: actual });
}

bootstrap().catch((error: unknown) => {
  console.error(`nestjs-api could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
