// One slice of HTTP load on an app server with Redis behind it, for the flood and fleet parts:
// lib/http-load.mjs's slice, plus what Redis did meanwhile (INFO commandstats and cpu deltas;
// only one app is loaded at a time, so they belong to it).

import { loadSlice } from './http-load.mjs';
import { counterDelta, readCounters } from './store-redis.mjs';

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
