// Starts the example API on Bun (`bun src/server.bun.js`). PORT (default 3000; 0 picks a free port), HOST (default 127.0.0.1).
// Prints `listening on http://<host>:<port>` once it listens: the demo reads the port from that line.
/* global Bun -- the Bun runtime's global */
import { getConnInfo } from 'hono/bun';
import { createApp } from './app.js';

const app = createApp({ getConnInfo });
const server = Bun.serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' });
console.log(`hono-api (Bun ${Bun.version}) listening on http://${server.hostname}:${server.port}`);
