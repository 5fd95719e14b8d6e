// One slice of HTTP load on an app server with Redis behind it, for the flood and fleet parts:
// lib/http-load.mjs's slice, plus what Redis did meanwhile (INFO commandstats and cpu deltas;
// only one app is loaded at a time, so they belong to it), and the Redis both parts run on.

import os from 'node:os';
import { loadSlice } from './http-load.mjs';
import { adminClient, counterDelta, openRedis, readCounters } from './store-redis.mjs';

/** The script calls a limiter can make: one is one round trip. */
export const SCRIPT_COMMANDS = ['fcall', 'fcall_ro', 'evalsha', 'evalsha_ro', 'eval', 'eval_ro'];

/**
 * Loads `server` for `ms` and reads Redis around it.
 * @returns {Promise<object>} loadSlice's figures, and `redis`: `{ commands: { name: calls }, scriptCalls, allCommands, cpuUs }`
 */
export async function loadSliceWithRedis(server, admin, ms, load = {}) {
  const before = await settledCounters(admin);
  const slice = await loadSlice(server, ms, load);
  const delta = counterDelta(before, await settledCounters(admin));
  const commands = Object.fromEntries(Object.entries(delta.commands).map(([name, c]) => [name, c.calls]));
  return {
    ...slice,
    redis: {
      commands,
      scriptCalls: SCRIPT_COMMANDS.reduce((n, name) => n + (commands[name] ?? 0), 0),
      allCommands: Object.values(commands).reduce((n, calls) => n + calls, 0),
      cpuUs: delta.cpuUs,
    },
  };
}

/**
 * Redis' counters once the loaded app has stopped calling it: autocannon leaves requests in
 * flight when a slice ends, and the app still answers them (and calls Redis) after its last
 * response was counted. Without this wait, the next slice's delta would hold that tail.
 */
export async function settledCounters(admin) {
  let last = await readCounters(admin);
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = await readCounters(admin);
    if (Object.keys(counterDelta(last, now).commands).length === 0) return now;
    last = now;
  }
  return last;
}

/** The load average now (1, 5, 15 min), two decimals: printed at a part's start and end. */
export function loadAverageNow() {
  return os.loadavg().map((n) => Number(n.toFixed(2)));
}

/**
 * Runs `perFramework({ framework, rows, server, admin })` for each of `chosen` (`{ framework, rows }[]`),
 * in turn, on one Redis: `REDIS_URL`, or a private redis-server on a free loopback port, flushed
 * between frameworks and stopped at the end. `note` goes into the first progress line.
 *
 * @returns {Promise<{ skipped: string } | { server: { own: boolean, version: string }, loadAverage: { start: number[], end: number[] }, frameworks: object }>}
 *   `skipped` when there is no Redis to use (a machine without redis-server still gets the other parts)
 */
export async function eachFrameworkOnRedis(part, chosen, log, perFramework, note = '') {
  let server;
  try {
    server = await openRedis();
  } catch (error) {
    const skipped = `skipped: no Redis (${error.message.split('\n')[0]})`;
    log(`${part}: ${skipped}`);
    return { skipped };
  }
  const loadAverage = { start: loadAverageNow() };
  log(`${part}: ${server.own ? 'started redis-server' : 'REDIS_URL'} ${server.url} (Redis ${server.version})${note ? `; ${note}` : ''}; load ${loadAverage.start.join(' ')}`);
  const admin = await adminClient(server.url);
  const frameworks = {};
  try {
    for (const { framework, rows } of chosen) {
      if (server.own) await admin.flushall();
      frameworks[framework] = await perFramework({ framework, rows, server, admin });
    }
  } finally {
    admin.disconnect();
    await server.stop();
  }
  loadAverage.end = loadAverageNow();
  log(`${part}: load ${loadAverage.end.join(' ')}`);
  return { server: { own: server.own, version: server.version }, loadAverage, frameworks };
}
