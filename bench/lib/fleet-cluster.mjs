// The fleet part's app: `node fleet-cluster.mjs <script> <limiter> <workers>` is a node:cluster
// primary that forks <workers> processes of an app script (bench/http-servers/redis-<framework>.mjs),
// all listening on one port: the primary accepts the connections and hands them out round-robin
// (cluster's default on Linux), as `pm2 -i 4` or a plain cluster setup does. Each worker has its
// own Redis connection. It answers its parent as a server of lib/http-server.mjs does:
//
//   { cmd: 'listen' } → { type: 'listening', port }   forks the workers, each builds its app and listens
//   { cmd: 'usage' }  → { type: 'usage', cpuMicros }   CPU time so far of the primary and every worker (user + system, µs)
//
// The workers are asked the same over cluster IPC. Everything exits when the parent disconnects.

import cluster from 'node:cluster';
import { serveParent } from './child.mjs';

const [script, limiter, workersText] = process.argv.slice(2);
const count = Number(workersText);
if (!script || !limiter || !(count >= 1)) throw new Error('usage: fleet-cluster.mjs <script> <limiter> <workers>');

/** One request to a worker over cluster IPC, answered by its serveHttp. */
function ask(worker, message) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => reject(new Error(`worker ${worker.process.pid} exited (code ${code}, signal ${signal})`));
    worker.once('exit', onExit);
    worker.once('message', (reply) => {
      worker.removeListener('exit', onExit);
      if (reply?.type === 'error') reject(new Error(`worker ${worker.process.pid}: ${reply.message}`));
      else resolve(reply);
    });
    worker.send(message);
  });
}

let workers = [];
cluster.setupPrimary({ exec: script, args: [limiter], execArgv: process.execArgv, silent: false });

serveParent(async (message) => {
  switch (message.cmd) {
    case 'listen': {
      if (workers.length > 0) throw new Error('already listening');
      workers = Array.from({ length: count }, () => {
        const worker = cluster.fork();
        worker.ready = new Promise((resolve) => worker.once('message', resolve)); // serveHttp's { type: 'ready' }
        return worker;
      });
      await Promise.all(workers.map((w) => w.ready));
      // One at a time: each builds its app and connects to Redis without the others competing for the CPU.
      const ports = [];
      for (const worker of workers) ports.push((await ask(worker, { cmd: 'listen' })).port);
      if (new Set(ports).size !== 1) throw new Error(`the workers listen on different ports: ${ports.join(', ')}`);
      return { type: 'listening', port: ports[0] };
    }
    case 'usage': {
      const own = process.cpuUsage();
      const replies = await Promise.all(workers.map((w) => ask(w, { cmd: 'usage' })));
      return { type: 'usage', cpuMicros: own.user + own.system + replies.reduce((n, r) => n + r.cpuMicros, 0) };
    }
    default:
      throw new Error(`unknown request ${JSON.stringify(message)}`);
  }
});

process.once('disconnect', async () => {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', resolve);
          w.disconnect();
          setTimeout(() => w.process.kill('SIGKILL'), 5_000).unref();
        }),
    ),
  );
  process.exit(0);
});
