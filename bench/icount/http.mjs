#!/usr/bin/env node
// Instructions per HTTP response of one server of bench/http-servers/, under
// callgrind: the server runs under valgrind, this process sends it requests
// (its own work is not counted). After a warm-up, the server's counters are
// zeroed (`callgrind_control -z`), N requests are sent, and the counters are
// dumped (`callgrind_control -d`): instructions ÷ N. Repeatable under load,
// unlike the HTTP part's µs per request; compare a limiter's row with the bare
// server's in the same framework (the difference is the middleware's cost).
//
//   node bench/icount/http.mjs <framework> <server> <scenario> [requests=2000] [warmup=3000]
//   node bench/icount/http.mjs express ratekit pass
//   node bench/icount/http.mjs fastify bare bare
//
// <server> is the part of the file name after the framework
// (bench/http-servers/<framework>-<server>.mjs); <scenario> is what that file takes.
// Requests go over 8 keep-alive connections (CONNECTIONS=<n> to change it: 50, as the
// timed part uses, gave the same Koa counts within 1%), each sending the next when the
// last is answered. Every response must have the scenario's status (200, or
// 429 for a reject scenario), or the run fails.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../lib/child.mjs';

const [framework, serverName, scenario, requestsText = '2000', warmupText = '3000'] = process.argv.slice(2);
if (scenario === undefined) {
  process.stderr.write('usage: node bench/icount/http.mjs <framework> <server> <scenario> [requests] [warmup]\n');
  process.exit(2);
}
const requests = Number(requestsText);
const warmup = Number(warmupText);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 8);
const WINDOWS = 4;
const expectedStatus = scenario.endsWith('reject') ? 429 : 200;

const here = dirname(fileURLToPath(import.meta.url));
const serverFile = join(here, '..', 'http-servers', `${framework}-${serverName}.mjs`);
const outDir = mkdtempSync(join(tmpdir(), 'icount-http-'));

// valgrind's own messages go to a file; the server's output, as in the HTTP part, to our stderr.
const child = startChild(serverFile, {
  args: [scenario],
  execPath: 'valgrind',
  execArgv: [
    '--tool=callgrind',
    `--callgrind-out-file=${outDir}/out.%p`,
    `--log-file=${outDir}/valgrind.log`,
    process.execPath,
    '--single-threaded',
    '--expose-gc',
    '--no-flush-bytecode',
    '--no-memory-reducer',
    '--min-semi-space-size=16',
    '--max-semi-space-size=16',
  ],
  label: `${framework}-${serverName} ${scenario} under callgrind`,
});

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
function send(port, count) {
  let sent = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume();
        res.once('end', () => (res.statusCode === expectedStatus ? resolve() : reject(new Error(`status ${res.statusCode}, expected ${expectedStatus}`))));
      });
      req.once('error', reject);
    });
  const lane = async () => {
    while (sent < count) {
      sent++;
      await one();
    }
  };
  return Promise.all(Array.from({ length: CONNECTIONS }, lane));
}

/**
 * The server's instructions since the last zeroing, from a dump made now: all of them, and those
 * outside the optimising compiler (which the JIT spends on its own schedule, whatever a request costs).
 */
function dumped() {
  execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
  const file = join(
    outDir,
    readdirSync(outDir)
      .filter((f) => /^out\.\d+\.\d+$/.test(f))
      .sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1)))
      .at(-1),
  );
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const count = (pattern) => Number((pattern.exec(annotated)?.[1] ?? '0').replaceAll(',', ''));
  const all = count(/^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/m);
  const compiler = count(/^\s*([\d,]+) \([\d. ]+%\)\s+\?\?\?:v8::internal::Compiler::CompileOptimized\(/m);
  return { all, compiler };
}

try {
  const { port } = await child.request({ cmd: 'listen' });
  // A reject scenario's limit of 1 is spent by the first request of the warm-up.
  if (expectedStatus === 429) await send(port, 1).catch(() => {});
  await send(port, warmup);
  const windows = [];
  for (let i = 0; i < WINDOWS; i++) {
    // Each window starts on a collected heap, so an old-generation collection falls in none of them.
    await child.request({ cmd: 'gc' });
    execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    await send(port, requests);
    windows.push(dumped());
  }
  const per = (n) => Math.round(n / requests);
  const without = windows.map((w) => per(w.all - w.compiler)).sort((a, b) => a - b);
  console.log(
    `${framework} ${serverName} ${scenario} instructions/response without the optimising compiler: median ${without[Math.floor(without.length / 2)]} [${without.join(' ')}]; all: ${windows.map((w) => per(w.all)).join(' ')}`,
  );
} finally {
  agent.destroy();
  await child.close();
  if (!process.env.KEEP) rmSync(outDir, { recursive: true, force: true });
  else console.log(outDir);
}
