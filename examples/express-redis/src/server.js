// Starts the example API on Redis.
//   REDIS_URL          the shared Redis (default redis://127.0.0.1:6379)
//   PORT, HOST         where to listen (default 3000 on 127.0.0.1; PORT=0 picks a free port)
//   NAME               this process's name in X-Served-By (default "pid <pid>")
//   RATE_LIMIT_PREFIX  the limiter's namespace in Redis (default "api")
// When started with an IPC channel (as two-processes.mjs does), it reports its port with process.send.
import { createClient } from 'redis';
import { createApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const name = process.env.NAME ?? `pid ${process.pid}`;

// The client settings @ratekit/redis recommends: fail fast while disconnected, keep reconnecting.
const client = createClient({
  url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  disableOfflineQueue: true,
  socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000) },
});
// Without an 'error' listener, node-redis's first connection error would crash the process.
client.on('error', (error) => console.error(`[${name}] redis: ${error.message}`));

try {
  await client.connect();
} catch (error) {
  console.error(`[${name}] could not connect to Redis: ${error.message}`);
  process.exit(1);
}

const server = createApp({ client, name, prefix: process.env.RATE_LIMIT_PREFIX }).listen(port, host, () => {
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`[${name}] express-redis listening on http://${host}:${actual}`);
  process.send?.({ listening: actual });
});

server.on('error', (error) => {
  console.error(`[${name}] could not start: ${error.message}`);
  process.exit(1);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => client.quit().finally(() => process.exit(0)));
    server.closeAllConnections();
  });
}
