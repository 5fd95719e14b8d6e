// The server side of the HTTP part: what every script in bench/http-servers/
// shares. A script builds one app for the scenario named in argv[2] and hands
// it to `serveHttp`, which listens on loopback and answers the parent over IPC.
//
// Requests (see lib/child.mjs):
//   { cmd: 'listen' } → { type: 'listening', port }             builds the app, listens on HOST, port chosen by the OS
//   { cmd: 'usage' }  → { type: 'usage', cpuMicros, heapUsed }   this process's CPU time so far (user + system, µs)
//   { cmd: 'gc' }     → { type: 'gc' }                            a full garbage collection (with --expose-gc; for bench/icount/http.mjs)
// The process exits when the parent disconnects.

import cluster from 'node:cluster';
import http from 'node:http';
import { serveParent } from './child.mjs';

/** Every server answers GET / with this body, as text. */
export const HELLO = 'hello world';

/** Loopback only: the load generator is on the same machine. */
export const HOST = '127.0.0.1';

/** The window of every limit: one hour, so a window never ends during a run. */
export const WINDOW_MS = 3_600_000;

/** The limit of the pass scenarios: never reached. */
export const NEVER = 1e9;

/** `pass` (limit NEVER) or `reject` (limit 1 per window: every request after the first is refused). */
export function limitOf(scenario) {
  if (scenario === 'pass') return NEVER;
  if (scenario === 'reject') return 1;
  throw new Error(`expected the scenario to be pass or reject, got ${JSON.stringify(scenario)}`);
}

/**
 * Listens with a Node request listener (an Express app, `koa.callback()`).
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export function listenNode(listener) {
  const server = http.createServer(listener);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
      resolve({
        port: server.address().port,
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

/**
 * Runs the server of one scenario: on the parent's `listen` request,
 * `build(scenario)` makes and starts the app and returns `{ port, close }`.
 * Then answers `usage` requests until the parent disconnects.
 */
export function serveHttp(build) {
  const scenario = process.argv[2];
  let running;
  serveParent(async (message) => {
    switch (message.cmd) {
      case 'listen':
        if (running !== undefined) throw new Error('already listening');
        running = await build(scenario);
        return { type: 'listening', port: running.port };
      case 'usage': {
        const cpu = process.cpuUsage();
        return { type: 'usage', cpuMicros: cpu.user + cpu.system, heapUsed: process.memoryUsage().heapUsed };
      }
      case 'gc':
        globalThis.gc?.();
        return { type: 'gc' };
      default:
        throw new Error(`unknown request ${JSON.stringify(message)}`);
    }
  });
  // A node:cluster worker (lib/fleet-cluster.mjs) says when it listens for requests: its primary's
  // messages sent before that would be dropped (cluster's IPC channel reads from the start).
  if (cluster.isWorker) process.send({ type: 'ready' });
  process.once('disconnect', async () => {
    await running?.close();
    // Exit normally (not by a signal), so --cpu-prof writes its profile.
    process.exit(0);
  });
}
