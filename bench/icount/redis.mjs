#!/usr/bin/env node
// Instructions per decision on the Redis server, under callgrind: a private redis-server runs
// under valgrind, and this process drives store contenders of the store part
// (lib/store-contenders.mjs) against it, 50 decisions in flight. For each contender in turn, the
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
// dictionaries) reaches all of them alike. Keys are touched once each before counting.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildVariant, connectClient } from '../lib/store-contenders.mjs';
import { makeKeys } from '../lib/keys.mjs';

const [clientId, keysText, ...variants] = process.argv.slice(2);
if (variants.length === 0) {
  process.stderr.write('usage: node bench/icount/redis.mjs <client> <keyCount> <variant>...\n');
  process.exit(2);
}
const DECISIONS = Number(process.env.DECISIONS ?? 20_000);
const WINDOWS = Number(process.env.WINDOWS ?? 4);
const IN_FLIGHT = 50;
const PORT = Number(process.env.PORT ?? 6391);
const keys = makeKeys(Number(keysText));
const outDir = mkdtempSync(join(tmpdir(), 'icount-redis-'));

const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    `--callgrind-out-file=${outDir}/out.%p`,
    `--log-file=${outDir}/valgrind.log`,
    process.env.REDIS_SERVER ?? 'redis-server',
    '--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no',
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const serverExit = new Promise((resolve) => server.once('exit', resolve));

/** Makes `count` decisions, `IN_FLIGHT` at a time, over the keys from `start`; resolves with where it stopped. */
function drive(decide, start, count) {
  let next = start;
  let made = 0;
  return new Promise((resolve, reject) => {
    let inFlight = 0;
    const launch = () => {
      while (inFlight < IN_FLIGHT && made < count) {
        inFlight++;
        made++;
        decide(keys[next]).then(() => {
          inFlight--;
          if (made === count && inFlight === 0) resolve(next);
          else launch();
        }, reject);
        if (++next === keys.length) next = 0;
      }
    };
    launch();
  });
}

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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let connection;
try {
  const url = `redis://127.0.0.1:${PORT}`;
  await listening();
  connection = await connectClient(clientId, url);
  const contenders = [];
  for (const id of variants) {
    const { decide } = await buildVariant(id, clientId, connection.client, `ratekit-icount:${id}:`);
    // Every key once, then as many decisions again, before any counting.
    const at = await drive(decide, 0, Math.max(keys.length, DECISIONS));
    contenders.push({ id, decide, at, windows: [] });
  }
  for (let w = 0; w < WINDOWS; w++) {
    for (const c of contenders) {
      execFileSync('callgrind_control', ['-z', String(server.pid)], { stdio: 'ignore' });
      c.at = await drive(c.decide, c.at, DECISIONS);
      c.windows.push(dumped());
    }
  }
  console.log(`${clientId}, ${keys.length} key(s), ${DECISIONS} decisions per window, ${WINDOWS} windows: Redis instructions per decision, median [each window]`);
  for (const c of contenders) {
    const per = (pick) => c.windows.map((x) => Math.round(pick(x) / DECISIONS));
    const all = per((x) => x.all);
    const script = per((x) => x.script);
    console.log(`${c.id.padEnd(26)} server ${median(all)} [${all.join(' ')}]  script ${median(script)} [${script.join(' ')}]`);
  }
} finally {
  await connection?.close();
  server.kill('SIGTERM');
  await serverExit;
  if (!process.env.KEEP) rmSync(outDir, { recursive: true, force: true });
  else console.log(outDir);
}
