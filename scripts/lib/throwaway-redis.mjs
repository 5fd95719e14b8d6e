// A redis-server for one run of an incumbent's own test suite: a free loopback port, nothing kept
// on disk, killed by stop(). Used by packages/{fastify,koa}/upstream/run.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

/** Prints `✖ message` and exits 1: how the suite runners report what stops them. */
export function fail(message) {
  console.error(`✖ ${message}`);
  process.exit(1);
}

/** Starts redis-server and resolves once it answers PING: `{ port, stop() }`. Exits the process when it cannot. */
export async function startThrowawayRedis() {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  server.on('error', (error) => fail(`could not start redis-server: ${error.message}`));
  const stop = () => server.kill('SIGKILL');
  for (let attempt = 0; attempt < 100; attempt++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG') return { port, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop();
  fail(`redis-server did not answer on port ${port}`);
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
