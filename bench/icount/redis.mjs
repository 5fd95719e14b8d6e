#!/usr/bin/env node
// Instructions per decision on the Redis server, under callgrind: a private redis-server runs
// under valgrind, and the store part's worker (lib/store-worker.mjs, one process per contender of
// lib/store-contenders.mjs) makes decisions against it, 50 in flight. For each contender in turn, the
// server's counters are zeroed (`callgrind_control -z`), N decisions are made, and the counters
// are dumped (`callgrind_control -d`). It prints, per decision, the median over the windows of:
//   server: every instruction of the server process (parsing, replies, the script, its calls);
//   script: those inside the script command (FCALL, EVAL or EVALSHA, inclusive), what
//           `INFO commandstats` times as usec.
// Counts do not move with the machine's load, unlike the store part's µs: use them to say which
// of two contenders costs Redis more. They leave out the kernel's share (the socket reads and
// writes), and cache misses. Needs valgrind, and a redis-server on PATH (REDIS_SERVER to name one).
//
//   node bench/icount/redis.mjs <client> <keyCount> <variant>...   (env DECISIONS=20000, WINDOWS=4)
//   node bench/icount/redis.mjs ioredis 1 fixed-window rlf
//   node bench/icount/redis.mjs node-redis 100000 fixed-window rlf rlr
//
// Contenders alternate within each window, so any drift of the server (its Lua heap, its
// dictionaries) reaches all of them alike. Each touches every key once, then makes N decisions,
// before any counting. A refused decision (the limit is never meant to be reached) fails the run.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../lib/child.mjs';

const [clientId, keysText, ...variants] = process.argv.slice(2);
if (variants.length === 0) {
  process.stderr.write('usage: node bench/icount/redis.mjs <client> <keyCount> <variant>...\n');
  process.exit(2);
}
const DECISIONS = Number(process.env.DECISIONS ?? 20_000);
const WINDOWS = Number(process.env.WINDOWS ?? 4);
const IN_FLIGHT = 50;
const PORT = Number(process.env.PORT ?? 6391);
const keyCount = Number(keysText);
const WORKER = fileURLToPath(new URL('../lib/store-worker.mjs', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'icount-redis-'));

const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    `--callgrind-out-file=${outDir}/out.%p`,
    `--log-file=${outDir}/valgrind.log`,
    process.env.REDIS_SERVER ?? 'redis-server',
    '--port',
    String(PORT),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'no',
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const serverExit = new Promise((resolve) => server.once('exit', resolve));

/** Instructions since the last zeroing, from a dump made now: the whole server, and inside script commands. */
function dumped() {
  execFileSync('callgrind_control', ['-d', String(server.pid)], { stdio: 'ignore' });
  const dumps = readdirSync(outDir).filter((f) => /^out\.\d+\.\d+$/.test(f));
  const file = join(outDir, dumps.sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1))).at(-1));
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const count = (name) => {
    const line = new RegExp(`^\\s*([\\d,]+) \\([\\d. ]+%\\)\\s+\\S*:${name}(?: |$)`, 'm').exec(annotated);
    return Number((line?.[1] ?? '0').replaceAll(',', ''));
  };
  const all = Number((/^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/m.exec(annotated)?.[1] ?? 'NaN').replaceAll(',', ''));
  return { all, script: count('fcallCommand') + count('evalCommand') + count('evalShaCommand') };
}

/** Resolves once the server accepts connections (valgrind takes a few seconds to start it). */
async function listening() {
  for (let attempt = 0; attempt < 120; attempt++) {
    if (server.exitCode !== null) throw new Error(`redis-server under valgrind exited with ${server.exitCode}: see ${outDir}/valgrind.log (KEEP=1 keeps it)`);
    const up = await new Promise((resolve) => {
      const socket = net.connect(PORT, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`redis-server under valgrind did not listen on ${PORT} within 60 s`);
}

/** `DECISIONS` decisions of one contender's worker, `IN_FLIGHT` at a time; none may be refused. */
async function count(worker, id) {
  const { refused } = await worker.request({ cmd: 'count', ops: DECISIONS });
  if (refused > 0) throw new Error(`${id}: ${refused} decisions refused (the limit is meant never to be reached)`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const workers = [];
try {
  const url = `redis://127.0.0.1:${PORT}`;
  await listening();
  const contenders = [];
  for (const id of variants) {
    const worker = startChild(WORKER, { label: `${id} (icount)` });
    workers.push(worker);
    const ready = await worker.request({ cmd: 'prepare', client: clientId, variant: id, url, prefix: `ratekit-icount:${id}:`, keyCount, inFlight: IN_FLIGHT, touchInFlight: IN_FLIGHT });
    if (ready.sanity !== 'ok') throw new Error(`${id}: ${ready.sanity}`);
    await count(worker, id);
    contenders.push({ id, worker, windows: [] });
  }
  for (let w = 0; w < WINDOWS; w++) {
    for (const c of contenders) {
      execFileSync('callgrind_control', ['-z', String(server.pid)], { stdio: 'ignore' });
      await count(c.worker, c.id);
      c.windows.push(dumped());
    }
  }
  console.log(`${clientId}, ${keyCount} key(s), ${DECISIONS} decisions per window, ${WINDOWS} windows: Redis instructions per decision, median [each window]`);
  for (const c of contenders) {
    const per = (pick) => c.windows.map((x) => Math.round(pick(x) / DECISIONS));
    const all = per((x) => x.all);
    const script = per((x) => x.script);
    console.log(`${c.id.padEnd(26)} server ${median(all)} [${all.join(' ')}]  script ${median(script)} [${script.join(' ')}]`);
  }
} finally {
  await Promise.all(workers.map((worker) => worker.close()));
  server.kill('SIGTERM');
  await serverExit;
  if (!process.env.KEEP) rmSync(outDir, { recursive: true, force: true });
  else console.log(outDir);
}
