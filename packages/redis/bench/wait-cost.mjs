// What `WAIT 1 <timeout ms>` after every decision would cost: a decision alone against a decision
// followed by WAIT on the same connection, on a master with one replica on loopback (started here,
// without persistence), one at a time and 50 in flight, on ioredis and node-redis. WAIT makes the
// app wait until a replica has the decision's write, so a failover cannot lose an admission the app
// has acted on (see packages/redis/README.md, "When Redis fails"). Needs a built @ratekit/core and
// @ratekit/redis (dist) and redis-server on PATH.
//   node packages/redis/bench/wait-cost.mjs [--n=3000] [--rounds=3]
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(new URL('../../../bench/package.json', import.meta.url));
const { Redis } = require('ioredis');
const { createClient } = require('redis');
const { createLimiter } = require('@ratekit/core');
const { redisStore } = require('@ratekit/redis');

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const N = Number(arg('n', 3000));
const ROUNDS = Number(arg('rounds', 3));
const INFLIGHT = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function server(port, ...args) {
  const dir = mkdtempSync(join(tmpdir(), 'ratekit-wait-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--repl-diskless-sync-delay', '0', ...args], {
    stdio: 'ignore',
  });
  process.once('exit', () => child.kill('SIGKILL'));
  return child;
}

const masterPort = 16_000 + Math.floor(Math.random() * 20_000);
const master = server(masterPort);
const replica = server(masterPort + 1, '--replicaof', '127.0.0.1', String(masterPort));
const admin = new Redis(masterPort + 1, { lazyConnect: true, retryStrategy: () => 50 });
for (;;) {
  try {
    // Once only: connect() rejects on a client already connecting or connected, and
    // ioredis reconnects on its own after a first failure.
    if (admin.status === 'wait') await admin.connect();
    if ((await admin.info('replication')).includes('master_link_status:up')) break;
  } catch {
    // the replica is not listening yet: ask again
  }
  await sleep(50);
}

const clients = {
  ioredis: async () => {
    const client = new Redis(masterPort);
    await new Promise((r) => client.once('ready', r));
    return { client, wait: () => client.call('WAIT', '1', '1000'), close: () => client.quit() };
  },
  'node-redis': async () => {
    const client = await createClient({ socket: { port: masterPort } }).connect();
    return { client, wait: () => client.sendCommand(['WAIT', '1', '1000']), close: () => client.quit() };
  },
};

/** WAITs that returned before a replica acknowledged (after 1 s). */
let timeouts = 0;

/** µs per decision: `inflight` loops of n / inflight decisions each, with or without WAIT after each. */
async function measure(limiter, wait, withWait, inflight) {
  let key = 0;
  const loop = async () => {
    for (let i = 0; i < N / inflight; i++) {
      await limiter.consume(`k${key++ % 1000}`);
      if (withWait && Number(await wait()) < 1) timeouts++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inflight }, loop));
  return ((performance.now() - started) * 1000) / N;
}

console.log(`WAIT 1 1000 after each decision, Redis ${(await admin.info('server')).match(/redis_version:(\S+)/)[1]}, master + 1 replica on 127.0.0.1, ${N} decisions per measure, median of ${ROUNDS}`);
for (const [name, connect] of Object.entries(clients)) {
  const { client, wait, close } = await connect();
  const limiter = createLimiter({ limits: { limit: 1e9, windowMs: 3_600_000 }, store: redisStore({ client }), prefix: 'wait-cost' });
  await measure(limiter, wait, true, 1); // warm-up, loads the library
  for (const inflight of [1, INFLIGHT]) {
    const rows = { without: [], with: [] };
    for (let r = 0; r < ROUNDS; r++) {
      rows.without.push(await measure(limiter, wait, false, inflight));
      rows.with.push(await measure(limiter, wait, true, inflight));
    }
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const [a, b] = [median(rows.without), median(rows.with)];
    console.log(`${name}, ${inflight} in flight: ${a.toFixed(1)} µs per decision without WAIT, ${b.toFixed(1)} µs with (${(b / a).toFixed(2)}×); WAIT timed out ${timeouts} times`);
    timeouts = 0;
  }
  await close();
}
await admin.quit();
master.kill('SIGKILL');
replica.kill('SIGKILL');
