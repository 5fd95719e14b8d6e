// Starts the example API on Node with @hono/node-server. PORT (default 3000; 0 picks a free port) and
// HOST (default 127.0.0.1). When started by the demo with an IPC channel, it reports its port with process.send.
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { createApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const server = serve({ fetch: createApp({ getConnInfo }).fetch, port, hostname: host }, (info) => {
  console.log(`hono-api (Node) listening on http://${host}:${info.port}`);
  process.send?.({ listening: info.port });
});

server.on('error', (error) => {
  console.error(`hono-api could not start: ${error.message}`);
  process.exit(1);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
  });
}
