// Starts the example API on Deno (`deno run --allow-net --allow-env src/server.deno.js`). PORT (default 3000; 0 picks a
// free port), HOST (default 127.0.0.1). Prints `listening on http://<host>:<port>`: the demo reads the port from that line.
/* global Deno -- the Deno runtime's global */
import { getConnInfo } from 'hono/deno';
import { createApp } from './app.js';

const app = createApp({ getConnInfo });
Deno.serve(
  {
    port: Number(Deno.env.get('PORT') ?? 3000),
    hostname: Deno.env.get('HOST') ?? '127.0.0.1',
    onListen: ({ hostname, port }) => console.log(`hono-api (Deno ${Deno.version.deno}) listening on http://${hostname}:${port}`),
  },
  app.fetch,
);
