// Starts the example API. PORT (default 3000; 0 picks a free port) and HOST (default 127.0.0.1).
// When started by the demo with an IPC channel, it reports its port with process.send.
import { createApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const server = createApp().listen(port, host, () => {
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`express-api listening on http://${host}:${actual}`);
  process.send?.({ listening: actual });
});

server.on('error', (error) => {
  console.error(`express-api could not start: ${error.message}`);
  process.exit(1);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
