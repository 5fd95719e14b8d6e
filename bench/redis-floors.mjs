#!/usr/bin/env node
// Redis server µs per call (INFO commandstats) of bare scripts, each one way of keeping a GCRA or
// fixed-window state: what a decision's layout costs the server before any of our code runs. Not
// a part of `pnpm bench`; see bench/notes/redis-floors.md, "Layout floors".
//
//   node bench/redis-floors.mjs [rounds=7] [calls=30000]
//
// A private redis-server, or REDIS_URL (see lib/store-redis.mjs); Redis 7 or later. ioredis, 50
// calls in flight, FCALL (each script is a function of one library, as our store calls its own);
// rounds take the scripts in turn, and the table gives each one's median and range.
// The scripts decide nothing (every call is admitted); they make the layout's commands and the
// arithmetic and formatting its state needs:
//   trivial   return 1
//   expiry    the expiry layout, whole ms: PTTL, then PEXPIRE (SET … PX on a new key)
//   fraction  the expiry layout with a fractional TAT: GET (the fraction), PTTL, SET fraction PX ms
//   hash      the hash layout: TIME, HGET, HSET (%.17g)
//   window    a fixed window of 1 h in the expiry layout: INCRBY, PTTL (PEXPIRE on a new window),
//             replying as our function does, one string.format of the window's start and count
//   window-table  the same commands, replying { count, pttl } as rate-limiter-flexible's script does
//   rlf-function  rate-limiter-flexible's own script text (read from the installed package) as a
//             function: SET … EX … NX, INCRBY, PTTL, { count, pttl }
// and, for comparison, @ratekit/redis's decision function (the built package, FCALL, as the store
// calls it on Redis 7) on the same calls:
//   ours-expiry  GCRA with T = 1 ms and a burst of 1,000 (whole ms: the expiry layout)
//   ours-hash    GCRA with T = 0.0036 ms and a burst of 1,000 (the hash)
//   ours-window  a fixed window of 1e9 per hour (the expiry layout), the store part's fixed-window
// and rate-limiter-flexible's script as that library sends it (EVAL with the script's text, its
// arguments as RateLimiterRedis.consume passes them; commandstats `eval`):
//   rlf-eval

import { DECISION_FUNCTION, DECISION_LIBRARY } from '@ratekit/redis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { adminClient, openRedis, readCounters } from './lib/store-redis.mjs';

const rounds = Number(process.argv[2] ?? 7);
const calls = Number(process.argv[3] ?? 30_000);
const IN_FLIGHT = 50;
const T = '0.0036';
const HOUR_MS = 3_600_000;
// rate-limiter-flexible's script, as the installed package holds it (not copied: read at run time).
const RLF_SCRIPT = new RateLimiterRedis({ storeClient: { status: 'ready' }, points: 1e9, duration: HOUR_MS / 1000 })._incrTtlLuaScript;
const RLF_ARGUMENTS = [1, HOUR_MS / 1000, 1e9, HOUR_MS / 1000];

const SCRIPTS = {
  trivial: `return 1`,
  expiry: `local t = redis.call('PTTL', key)
    if t < 0 then redis.call('SET', key, '1', 'PX', 5) return '= 1 -' end
    redis.call('PEXPIRE', key, t + 1) return '= 1 ' .. t`,
  fraction: `local v = redis.call('GET', key) local t = redis.call('PTTL', key)
    local tat = 0 if v and t >= 0 then tat = t - tonumber(v) end if tat < 0 then tat = 0 end
    local n = tat + ${T} local c = math.ceil(n)
    redis.call('SET', key, string.format('%.17g', c - n), 'PX', c)
    return '= 1 ' .. string.format('%.17g', tat)`,
  hash: `local time = redis.call('TIME') local now = time[1] * 1000 + math.floor(time[2] / 1000)
    local r = redis.call('HGET', key, 'f') local tat = now if r then tat = tonumber(r) end if tat < now then tat = now end
    redis.call('HSET', key, 'f', string.format('%.17g', tat + ${T}))
    return time[1] .. '/' .. time[2] .. ' 1 ' .. (r or '-')`,
  window: `local n = redis.call('INCRBY', key, 1) local t = redis.call('PTTL', key)
    if t < 0 then redis.call('PEXPIRE', key, ${HOUR_MS}) return '= 1 -' end
    return string.format('= 1 %d,%d', t - ${HOUR_MS}, n - 1)`,
  'window-table': `local n = redis.call('INCRBY', key, 1) local t = redis.call('PTTL', key)
    if t < 0 then redis.call('PEXPIRE', key, ${HOUR_MS}) t = ${HOUR_MS} end
    return { n, t }`,
};

/** Our script's argument for consume 1 on the server clock (see DECISION_CODE): `~` ids are in the expiry layout. */
const ours = (T, layout) => `consume 1 - gcra ${T} ${1_000 * T} 6${layout}floors`;
const key = '{ratekit-floors}';
const ARGUMENTS = { 'ours-expiry': ours(1, '~'), 'ours-hash': ours(Number(T), ':'), 'ours-window': `consume 1 - fixed-window 1000000000 ${HOUR_MS} 6~floors` };

/** The name a bare script is registered under in the floors' library (Lua names take no '-'). */
const floorFunction = (name) => `floor_${name.replaceAll('-', '_')}`;

const redis = await openRedis();
const client = await adminClient(redis.url);
try {
  const library = [
    '#!lua name=ratekit_floors',
    ...Object.entries(SCRIPTS).map(([name, body]) => `redis.register_function('${floorFunction(name)}', function(keys) local key = keys[1]\n${body}\nend)`),
    `redis.register_function('${floorFunction('rlf-function')}', function(KEYS, ARGV)\n${RLF_SCRIPT}\nend)`,
  ].join('\n');
  await client.function('LOAD', 'REPLACE', library);
  await client.function('LOAD', 'REPLACE', DECISION_LIBRARY);
  const names = [...Object.keys(SCRIPTS), 'rlf-function', ...Object.keys(ARGUMENTS), 'rlf-eval'];
  const call = (name) => {
    if (name === 'rlf-eval') return client.eval(RLF_SCRIPT, 1, key, ...RLF_ARGUMENTS);
    if (name === 'rlf-function') return client.fcall(floorFunction(name), 1, key, ...RLF_ARGUMENTS);
    return ARGUMENTS[name] === undefined ? client.fcall(floorFunction(name), 1, key) : client.fcall(DECISION_FUNCTION, 1, key, ARGUMENTS[name]);
  };
  const counted = (counters, name) => counters.commands[name === 'rlf-eval' ? 'eval' : 'fcall'] ?? { calls: 0, usec: 0 };
  const results = {};
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      await client.del(key);
      await Promise.all(Array.from({ length: 1_000 }, () => call(name)));
      const before = counted(await readCounters(client), name);
      let sent = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (sent++ < calls) await call(name);
        }),
      );
      const after = counted(await readCounters(client), name);
      (results[name] ??= []).push((after.usec - before.usec) / (after.calls - before.calls));
    }
  }
  await client.del(key);
  await client.function('DELETE', 'ratekit_floors');
  console.log(`Redis ${redis.version}, ${rounds} rounds of ${calls} calls each, ${IN_FLIGHT} in flight; server µs per call (INFO commandstats):\n`);
  console.log('| script        | median | range |');
  console.log('|:--------------|-------:|------:|');
  for (const [name, values] of Object.entries(results)) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`| ${name.padEnd(13)} | ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} | ${sorted[0].toFixed(2)}–${sorted.at(-1).toFixed(2)} |`);
  }
} finally {
  await client.quit();
  await redis.stop();
}
