// The servers the matrix's edge tests (`*.edge.test.ts`) reach over HTTP. A test on Bun, Deno or workerd cannot
// start a process, so this Node process starts them before the runtimes run and stops them after:
//   upstash: a throwaway redis-server (free loopback port, nothing on disk) behind @ratekit/test-utils' local
//            endpoint speaking Upstash's REST protocol (packages/test-utils/src/upstash-rest-server.ts).
// The tests get their addresses from `upstashEndpoint()` (@ratekit/test-utils' runtime.ts), which reads what the
// harness puts in `globalThis.__RATEKIT_MATRIX__`.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

function onPath(binary) {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin', '/usr/sbin']) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return join(dir, binary);
    } catch {
      // not here
    }
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the services. Resolves `{ matrix, stop }` (`matrix` is what the tests see), or `{ missing }` with the
 * reason when a binary is not on the machine (the caller skips outside CI and fails in CI).
 * @param {string} root - the repository
 * @param {string} work - a folder for the compiled endpoint
 */
export async function startServices(root, work) {
  const redisServer = onPath('redis-server');
  if (redisServer === undefined) return { missing: '`redis-server` was not found on PATH (the Upstash REST endpoint runs in front of it)' };
  const stops = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  try {
    const port = await freePort();
    const redis = spawn(redisServer, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    stops.push(async () => redis.kill('SIGKILL'));
    const spawnFailed = new Promise((_, reject) => redis.once('error', reject));
    // node-redis, from packages/redis (a dependency of the workspace's Redis store).
    const { createClient } = createRequire(join(root, 'packages/redis/package.json'))('redis');
    const client = await Promise.race([connectWithin(() => createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } }), 10_000), spawnFailed]);
    stops.push(() => client.quit());
    const compiled = join(work, 'upstash-rest-server.mjs');
    await build({ entryPoints: [join(root, 'packages/test-utils/src/upstash-rest-server.ts')], outfile: compiled, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
    const { startUpstashRestServer } = await import(pathToFileURL(compiled).href);
    const rest = await startUpstashRestServer({ sendCommand: (args) => client.sendCommand(args) });
    stops.push(() => rest.close());
    return { matrix: { upstash: { url: rest.url, token: rest.token } }, stop, note: `a throwaway redis-server on port ${port} behind the Upstash REST endpoint ${rest.url}` };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A connected client once redis-server listens: it takes a few ms to start, so a new client every 50 ms until `withinMs`. */
async function connectWithin(makeClient, withinMs) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const client = makeClient();
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server did not accept a connection within ${withinMs} ms: ${error.message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
