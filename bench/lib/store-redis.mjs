// The Redis server of the store part, and what the part reads from it.
//
// `REDIS_URL` names a server to use; otherwise the part starts its own
// `redis-server` on a free loopback port (no persistence, a temporary
// working directory) and stops it at the end. Server-side figures come from
// `INFO commandstats` and `INFO cpu` deltas around each slice (only one
// contender works at a time, so a delta belongs to it), and the split of
// commands between the client and the scripts from a short MONITOR capture.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';

/**
 * A Redis server for the run: `REDIS_URL`, or a private `redis-server`.
 *
 * @returns {Promise<{ url: string, own: boolean, version: string, stop: () => Promise<void> }>}
 * @throws {Error} when `REDIS_URL` is unset and `redis-server` cannot be started (the error carries its output)
 */
export async function openRedis(env = process.env) {
  if (env.REDIS_URL) {
    const version = await serverVersion(env.REDIS_URL);
    return { url: env.REDIS_URL, own: false, version, stop: async () => {} };
  }
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const server = await startRedisServer(await freePort());
      return { ...server, own: true, version: await serverVersion(server.url) };
    } catch (error) {
      lastError = error; // the port was taken between freePort() and the bind: try another
    }
  }
  throw lastError;
}

async function startRedisServer(port) {
  const dir = mkdtempSync(join(tmpdir(), 'ratekit-bench-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk) => {
    output = (output + chunk).slice(-4_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const failed = new Promise((_, reject) => {
    child.once('error', reject);
    exited.then((code) => reject(new Error(`redis-server exited with code ${code}`)));
  });
  failed.catch(() => {});
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitForPing(url, 10_000), failed]);
  } catch (error) {
    await stop();
    throw new Error(`Could not start redis-server on port ${port} (set REDIS_URL to use another server): ${error.message}\n${output}`, { cause: error });
  }
  return { url, stop };
}

async function waitForPing(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {}); // refused until the server listens: connect() rejects, and we retry
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    } finally {
      client.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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

async function serverVersion(url) {
  const admin = await adminClient(url);
  try {
    const info = await admin.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } finally {
    admin.disconnect();
  }
}

/** A connected ioredis client for the parent's own commands (INFO, SCAN, MONITOR). */
export async function adminClient(url) {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  return client;
}

/**
 * One reading of the server's counters: per command `{ calls, usec }` from
 * `INFO commandstats`, the server process's CPU time in µs from `INFO cpu`,
 * and the reads it has made from client sockets (`INFO stats`
 * `total_reads_processed`; NaN on a server without it).
 */
export async function readCounters(admin) {
  // Redis 7 takes several sections at once; older servers one.
  const text = await admin.info('commandstats', 'cpu', 'stats').catch(async () => `${await admin.info('commandstats')}\n${await admin.info('cpu')}\n${await admin.info('stats')}`);
  const commands = {};
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
  }
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { commands, cpuUs: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6, reads: field('total_reads_processed') };
}

/**
 * What happened between two readings, the parent's own `INFO` calls left
 * out: per command `{ calls, usec }`, the server's CPU µs, and its socket
 * reads (less the one that read the second `INFO`).
 */
export function counterDelta(before, after) {
  const commands = {};
  for (const [name, now] of Object.entries(after.commands)) {
    if (name === 'info') continue;
    const was = before.commands[name] ?? { calls: 0, usec: 0 };
    if (now.calls > was.calls) commands[name] = { calls: now.calls - was.calls, usec: now.usec - was.usec };
  }
  return { commands, cpuUs: after.cpuUs - before.cpuUs, reads: after.reads - before.reads - 1 };
}

/** Adds delta `b` into the running total `a` (mutates `a`, returns it). */
export function addDelta(a, b) {
  for (const [name, { calls, usec }] of Object.entries(b.commands)) {
    const entry = (a.commands[name] ??= { calls: 0, usec: 0 });
    entry.calls += calls;
    entry.usec += usec;
  }
  a.cpuUs += b.cpuUs;
  a.reads += b.reads;
  return a;
}

/**
 * Runs `work()` with a MONITOR connection open and sorts what the server
 * executed meanwhile: commands sent by other clients (each one a round
 * trip) and commands run from inside scripts (`lua`). The parent's own
 * connections (this admin client, the monitor's) are left out. A marker
 * `ECHO` sent after `work()` resolves tells when every line has arrived.
 *
 * @returns {Promise<{ fromClients: Record<string, number>, fromScripts: Record<string, number>, result: unknown }>}
 */
export async function monitorWhile(admin, work) {
  const monitor = await admin.monitor();
  const own = new Set([admin.stream?.localPort, monitor.stream?.localPort].filter(Boolean).map((port) => `:${port}`));
  const fromClients = {};
  const fromScripts = {};
  const marker = `ratekit-bench-marker-${process.pid}-${Date.now()}`;
  let sawMarker;
  const markerSeen = new Promise((resolve) => {
    sawMarker = resolve;
  });
  monitor.on('monitor', (_time, args, source) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'echo' && args[1] === marker) sawMarker();
    if (source !== 'lua' && [...own].some((port) => String(source).endsWith(port))) return;
    const table = source === 'lua' ? fromScripts : fromClients;
    table[name] = (table[name] ?? 0) + 1;
  });
  try {
    const result = await work();
    await admin.echo(marker);
    await Promise.race([markerSeen, new Promise((_, reject) => setTimeout(() => reject(new Error('MONITOR did not show the marker within 5 s')), 5_000))]);
    return { fromClients, fromScripts, result };
  } finally {
    monitor.disconnect();
  }
}

/**
 * One SCAN over the keys matching `pattern` (so the server is never blocked
 * for long), grouped by `groupOf(key)`: per group, how many keys, and how
 * many of the first `sample` of them have no TTL.
 *
 * @returns {Promise<Map<string, { count: number, sampled: number, withoutTtl: number }>>}
 */
export async function inspectKeys(admin, pattern, groupOf, sample = 200) {
  const groups = new Map();
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
    cursor = next;
    for (const key of keys) {
      const id = groupOf(key);
      let group = groups.get(id);
      if (group === undefined) groups.set(id, (group = { count: 0, sampledKeys: [] }));
      group.count++;
      if (group.sampledKeys.length < sample) group.sampledKeys.push(key);
    }
  } while (cursor !== '0');
  const out = new Map();
  for (const [id, group] of groups) {
    const ttls = await Promise.all(group.sampledKeys.map((key) => admin.pttl(key)));
    out.set(id, { count: group.count, sampled: ttls.length, withoutTtl: ttls.filter((ttl) => ttl === -1).length });
  }
  return out;
}

/** Deletes every key matching `pattern` (SCAN + UNLINK): the clean-up on a server given by `REDIS_URL`. */
export async function deleteKeys(admin, pattern) {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
    cursor = next;
    if (keys.length > 0) await admin.unlink(...keys);
  } while (cursor !== '0');
}

/** Versions of the client libraries and the incumbent, as installed for bench/ (@redis/client as resolved from redis). */
export function storeVersions() {
  const read = (require, name) => {
    try {
      return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
    } catch {
      // A package whose `exports` hide package.json (rate-limit-redis): read it next to its entry.
      try {
        const entry = require.resolve(name);
        const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
        return JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version;
      } catch {
        return 'not installed';
      }
    }
  };
  const here = createRequire(import.meta.url);
  const versions = {};
  for (const name of ['redis', 'ioredis', 'rate-limiter-flexible', 'rate-limit-redis', '@fastify/rate-limit', 'koa-ratelimit']) versions[name] = read(here, name);
  try {
    // koa-ratelimit's redis driver is async-ratelimiter, a dependency of koa-ratelimit, not of bench/.
    versions['async-ratelimiter'] = read(createRequire(here.resolve('koa-ratelimit/package.json')), 'async-ratelimiter');
  } catch {
    versions['async-ratelimiter'] = 'not installed';
  }
  try {
    versions['@redis/client'] = read(createRequire(here.resolve('redis/package.json')), '@redis/client');
  } catch {
    versions['@redis/client'] = 'not installed';
  }
  return versions;
}
