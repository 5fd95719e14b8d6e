// A child process serving Upstash's Redis REST protocol in front of a Redis server, for the upstash
// part: @ratekit/test-utils' startUpstashRestServer (TypeScript, loaded with tsx), over node-redis.
// Its own process, so that the endpoint's work is not counted against the contenders'.
//
// Requests (lib/child.mjs protocol):
//   { cmd: 'start', url }   connects to the Redis at `url`, listens  → { type: 'started', url, token }
//   { cmd: 'requests' }     HTTP requests answered so far            → { type: 'requests', requests }
//   { cmd: 'stop' }         closes the endpoint and the connection   → { type: 'stopped' }
import { createClient } from 'redis';
import { tsImport } from 'tsx/esm/api';
import { serveParent } from './child.mjs';

const SERVER = new URL('../../packages/test-utils/src/upstash-rest-server.ts', import.meta.url).href;
let endpoint;
let client;

serveParent(async (message) => {
  switch (message.cmd) {
    case 'start': {
      const { startUpstashRestServer } = await tsImport(SERVER, import.meta.url);
      client = await createClient({ url: message.url }).connect();
      endpoint = await startUpstashRestServer({ sendCommand: (args) => client.sendCommand(args) });
      return { type: 'started', url: endpoint.url, token: endpoint.token };
    }
    case 'requests':
      return { type: 'requests', requests: endpoint.requests() };
    case 'stop':
      await endpoint?.close();
      await client?.quit();
      return { type: 'stopped' };
    default:
      throw new Error(`unknown command ${message.cmd}`);
  }
});
