// Would one statement deciding many keys pay on PostgreSQL? (issue 26, "coalesced decisions")
//
// Starts a PostgreSQL of its own (initdb on a free loopback port; as the `postgres` user when run
// as root), creates the store's schema, then measures decisions per second and the server's CPU
// per decision (the backends' utime + stime from /proc) for 50 decisions of one policy:
//   - lone:  50 limiter.consume() calls in flight on a pool of `POOL` connections, with `coalesce: false`
//            (one statement per decision);
//   - coalesced: the same with the store's default, coalescing (the first alone, the other 49 in one
//            statement);
//   - batch: the same 50 decisions as one hand-written statement, the store's function called once
//            per row of unnest($keys) WITH ORDINALITY (one transaction, so one commit), on one connection.
// Keys: one key (50 decisions of it per step) or 10,000 (round-robin). The hand-written batch is the
// SQL alone (its replies are read, not turned into decisions): the floor of the store's coalescing.
// Needs the built packages (pnpm build). Run:
//   node packages/postgres/bench/batch-probe.mjs [--ms=3000] [--pool=1] [--sync]   (--sync: fsync and synchronous_commit on)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter } from '@ratekit/core';
import { postgresStore } from '@ratekit/postgres';
import pg from 'pg';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const MS = Number(arg('ms', '3000'));
const SYNC = process.argv.includes('--sync');
const IN_FLIGHT = 50;
const POOL = Number(arg('pool', '1'));

const bin = `/usr/lib/postgresql/${readdirSync('/usr/lib/postgresql').sort().at(-1)}/bin`;
const root = mkdtempSync(join(tmpdir(), 'ratekit-pgprobe-'));
const asPostgres = process.getuid?.() === 0;
if (asPostgres) {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  chownSync(root, uid, gid);
}
const run = (file, args) => {
  const [f, a] = asPostgres ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const r = spawnSync(f, a, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${file} failed: ${r.stderr}${r.stdout}`);
};
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = s.address();
    s.close(() => resolve(p));
  });
});
const data = join(root, 'data');
run(`${bin}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
const durability = SYNC ? '' : '-c fsync=off -c synchronous_commit=off -c full_page_writes=off';
run(`${bin}/pg_ctl`, ['start', '-D', data, '-l', join(root, 'log'), '-w', '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${root} ${durability}`]);
const stop = () => {
  try {
    run(`${bin}/pg_ctl`, ['stop', '-D', data, '-m', 'immediate']);
  } catch {
    // the server is already gone: only its files are left to remove
  }
  rmSync(root, { recursive: true, force: true });
};
process.once('exit', stop);

/** CPU seconds (utime + stime) of every process of the server. */
function serverCpuUs() {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const pids = [
    postmaster,
    ...execFileSync('pgrep', ['-P', String(postmaster)])
      .toString()
      .trim()
      .split('\n')
      .map(Number),
  ];
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the backend exited since pgrep listed it: its CPU is no longer counted anywhere
    }
  }
  return (ticks / 100) * 1e6; // USER_HZ = 100
}

const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
const pool = new pg.Pool({ connectionString: url, max: POOL });
const store = postgresStore({ pool, cleanupIntervalMs: 0, coalesce: false });
await store.createSchema();
const limiter = createLimiter({ limits: { limit: 1e9, windowMs: 3_600_000 }, store });
const coalescing = createLimiter({ limits: { limit: 1e9, windowMs: 3_600_000 }, store: postgresStore({ pool, cleanupIntervalMs: 0 }) });
const limits = limiter.limitsFor();
const ids = limits.map((l) => l.id);
const algorithms = limits.map((l) => l.algorithm);
const params = limits.flatMap((l) => [l.limit, l.windowMs, l.burst, l.refill === 'interval' ? 1 : 0, l.maxDelayMs, l.refusedPenaltyCapMs ?? null, l.blockDurationMs]);
const batchText = `SELECT array_send(ratekit_evaluate('probe', k, 'consume', 1::float8, NULL::float8, $2::text[], $3::text[], $4::float8[])) AS reply
FROM unnest($1::text[]) WITH ORDINALITY AS t(k, i) ORDER BY i`;
const batchClient = new pg.Client({ connectionString: url });
await batchClient.connect();

async function measure(label, keyCount, step) {
  const keys = Array.from({ length: keyCount }, (_, i) => `key-${i}`);
  let cursor = 0;
  const next = () => {
    const k = keys[cursor];
    cursor = (cursor + 1) % keys.length;
    return k;
  };
  // Touch every key, then measure.
  for (let i = 0; i < keyCount; i += IN_FLIGHT) await step(next);
  const cpu0 = serverCpuUs();
  const start = performance.now();
  let decisions = 0;
  while (performance.now() - start < MS) decisions += await step(next);
  const ms = performance.now() - start;
  const cpu = serverCpuUs() - cpu0;
  console.log(
    `${label.padEnd(44)} ${keyCount === 1 ? '1 key   ' : `${keyCount} keys`}  ${((decisions * 1000) / ms).toFixed(0).padStart(7)} decisions/s  ${(cpu / decisions).toFixed(1).padStart(6)} µs server CPU / decision`,
  );
}

const lone = async (next) => {
  await Promise.all(Array.from({ length: IN_FLIGHT }, () => limiter.consume(next())));
  return IN_FLIGHT;
};
const coalesced = async (next) => {
  await Promise.all(Array.from({ length: IN_FLIGHT }, () => coalescing.consume(next())));
  return IN_FLIGHT;
};
const batch = async (next) => {
  const keys = Array.from({ length: IN_FLIGHT }, next);
  const result = await batchClient.query({ name: 'probe_batch', text: batchText, values: [keys, ids, algorithms, params] });
  if (result.rows.length !== IN_FLIGHT) throw new Error('short batch');
  return IN_FLIGHT;
};
console.log(
  `PostgreSQL (${bin}), ${SYNC ? 'fsync and synchronous_commit on' : 'fsync, synchronous_commit and full_page_writes off (as the tests)'}; ${IN_FLIGHT} decisions per step; pool of ${POOL}; ${MS} ms per measure`,
);
for (const keyCount of [1, 10_000]) {
  await measure(`lone: ${IN_FLIGHT} consume(), coalesce: false`, keyCount, lone);
  await measure(`coalesced: ${IN_FLIGHT} consume(), the default`, keyCount, coalesced);
  await measure(`batch: 1 statement of ${IN_FLIGHT} (unnest)`, keyCount, batch);
}
await batchClient.end();
await pool.end();
process.exit(0);
