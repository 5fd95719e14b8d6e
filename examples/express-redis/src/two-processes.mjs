#!/usr/bin/env node
// Two Express processes, one budget: starts src/server.js twice on free ports, both on one Redis,
// sends them traffic alternately, and checks that the 10-per-minute budget of an API key is
// enforced exactly across both (10 allowed in total, not 10 each).
//
//   node examples/express-redis/src/two-processes.mjs     (after `pnpm build`)
//
// Redis: REDIS_URL if set, else a redis-server of its own on a free loopback port (found on PATH
// or in /usr/bin, /usr/local/bin), stopped at the end. Exits 0 when the budget held exactly.
import { fork, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIMIT = 10; // API_POLICY in app.js
const SEQUENTIAL = 20;
const BURST = 100;
const here = fileURLToPath(new URL('.', import.meta.url));
const cleanups = [];

async function main() {
  const redisUrl = process.env.REDIS_URL ?? (await startRedis());
  // A namespace of this run's own, so a rerun on a persistent Redis starts with a full budget.
  const prefix = `demo-${Date.now().toString(36)}`;
  const [a, b] = await Promise.all([startApp('A', redisUrl, prefix), startApp('B', redisUrl, prefix)]);
  console.log(`Redis ${redisUrl}; process A on :${a.port} (pid ${a.pid}), process B on :${b.port} (pid ${b.pid}); limit ${LIMIT} per minute per API key\n`);

  console.log(`1. ${SEQUENTIAL} requests of API key "alice", alternating A, B, A, B, …`);
  console.log('   #   to  status  RateLimit header (r: remaining, t: seconds to reset)');
  const sequential = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const app = i % 2 === 0 ? a : b;
    const response = await get(app, 'alice');
    sequential.push({ app: app.name, status: response.status });
    const retry = response.headers.get('retry-after');
    console.log(`  ${String(i + 1).padStart(2)}   ${app.name}   ${response.status}     ${response.headers.get('ratelimit') ?? '-'}${retry ? `  Retry-After: ${retry}` : ''}`);
  }
  const seq = tally(sequential);
  console.log(`   → A allowed ${seq.A}, B allowed ${seq.B}: ${seq.total} allowed in total, ${SEQUENTIAL - seq.total} refused\n`);

  console.log(`2. ${BURST} concurrent requests of API key "bob", half to A, half to B`);
  const burst = await Promise.all(
    Array.from({ length: BURST }, (_, i) => {
      const app = i % 2 === 0 ? a : b;
      return get(app, 'bob').then((response) => ({ app: app.name, status: response.status }));
    }),
  );
  const con = tally(burst);
  console.log(`   → A allowed ${con.A}, B allowed ${con.B}: ${con.total} allowed in total, ${BURST - con.total} refused\n`);

  const exact = seq.total === LIMIT && con.total === LIMIT && [...sequential, ...burst].every((r) => r.status === 200 || r.status === 429);
  if (exact) console.log(`✔ The shared budget held exactly: ${LIMIT} allowed per API key across both processes, not ${LIMIT} each.`);
  else console.log(`✖ Expected exactly ${LIMIT} allowed per API key across both processes (got ${seq.total} and ${con.total}).`);
  return exact ? 0 : 1;
}

/** GET /api/hello with an API key; the status and the headers. */
async function get(app, key) {
  const response = await fetch(`http://127.0.0.1:${app.port}/api/hello`, { headers: { 'x-api-key': key } });
  await response.arrayBuffer();
  return response;
}

function tally(results) {
  const allowed = (name) => results.filter((r) => r.app === name && r.status === 200).length;
  return { A: allowed('A'), B: allowed('B'), total: allowed('A') + allowed('B') };
}

/** Forks src/server.js on a free port; resolves once it listens. */
function startApp(name, redisUrl, prefix) {
  const child = fork(join(here, 'server.js'), [], {
    env: { ...process.env, REDIS_URL: redisUrl, PORT: '0', NAME: name, RATE_LIMIT_PREFIX: prefix },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  cleanups.push(() => stopProcess(child));
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ name, port: message.listening, pid: child.pid }));
    child.once('exit', (code) => reject(new Error(`process ${name} exited with code ${code} before listening (did you run \`pnpm build\`?)`)));
  });
}

/** Starts a private redis-server without persistence on a free loopback port; resolves with its URL. */
async function startRedis() {
  const binary = findBinary('redis-server');
  if (binary === undefined) throw new Error('REDIS_URL is unset and redis-server was not found on PATH: set REDIS_URL or install Redis');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ratekit-example-redis-'));
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  cleanups.push(async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 10_000;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  console.log(`(started redis-server on 127.0.0.1:${port}; set REDIS_URL to use your own)`);
  return `redis://127.0.0.1:${port}`;
}

function findBinary(name) {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin']) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/** SIGTERM, then SIGKILL after 5 s. */
function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`✖ ${error.message}`);
} finally {
  // Apps first, then Redis.
  for (const cleanup of cleanups.reverse()) await cleanup();
}
process.exit(code);
