// Part "upstash": @upstash/ratelimit 2.2 and @ratekit/upstash in the same run, on the same local
// Upstash REST endpoint (lib/upstash-endpoint.mjs, in its own process, in front of a private
// redis-server), and @ratekit/upstash and @ratekit/redis over TCP (ioredis) on the same server.
//
// Per algorithm (fixed window, sliding window, token bucket; limits never reached, so every
// decision passes and writes) and contender: decisions for `sliceMs` with 50 in flight, each on
// the next of `keys` identifiers; 3 rounds (BENCH_UPSTASH_ROUNDS; BENCH_UPSTASH_SLICE_MS for the 3 s slices), contenders in a shuffled order each round. Reported per
// decision: HTTP requests (the endpoint's count), Redis commands (INFO commandstats, every command
// the server ran, those inside scripts included) and Redis CPU (INFO cpu); and decisions per second,
// median over rounds. The load runs in this process, one contender at a time.

import { Ratelimit as UpstashRatelimit } from '@upstash/ratelimit';
import { Redis as UpstashRedis } from '@upstash/redis';
import { createLimiter } from '@ratekit/core';
import { redisStore } from '@ratekit/redis';
import { Ratelimit as RatekitRatelimit } from '@ratekit/upstash';
import Redis from 'ioredis';
import { againstPackageUrl, isTwin, twinOf, untwinned } from './lib/against.mjs';
import { startChild } from './lib/child.mjs';
import { formatFixed, formatRate, renderTable } from './lib/format.mjs';
import { adminClient, counterDelta, openRedis, readCounters } from './lib/store-redis.mjs';
import { scheduleFromEnv } from './lib/options.mjs';
import { median, seededRandom, summary } from './lib/stats.mjs';
import { UPSTASH_ALGORITHMS as ALGORITHMS } from './lib/upstash-algorithms.mjs';

const ENDPOINT = new URL('./lib/upstash-endpoint.mjs', import.meta.url).pathname;
const IN_FLIGHT = 50;
const FULL = { rounds: 3, sliceMs: 3_000, keys: 10_000 };
const QUICK = { rounds: 1, sliceMs: 800, keys: 1_000 };

/** A contender's `make` for a `Ratelimit` class (the incumbent's, ours, or the ref's) on the client `clientOf` picks. */
const ratelimitOn = (Ratelimit, clientOf) => (a, c, prefix) => {
  const limiter = new Ratelimit({ redis: clientOf(c), limiter: a.upstash(Ratelimit), prefix });
  return async (id) => (await limiter.limit(id)).success;
};
const HTTP = (c) => c.upstash;
const TCP = (c) => c.ioredis;

/** Who decides, and over what: `make(algorithm, clients, prefix)` → `(id) => Promise<boolean>` (admitted). */
const CONTENDERS = [
  { id: 'incumbent-http', label: '@upstash/ratelimit 2.2, HTTP', make: ratelimitOn(UpstashRatelimit, HTTP) },
  { id: 'ours-http', label: '@ratekit/upstash, HTTP', client: HTTP, make: ratelimitOn(RatekitRatelimit, HTTP) },
  { id: 'ours-tcp', label: '@ratekit/upstash, TCP (ioredis)', client: TCP, make: ratelimitOn(RatekitRatelimit, TCP) },
  {
    id: 'redis-tcp',
    label: '@ratekit/redis, TCP (ioredis)',
    make: (a, c, prefix) => {
      const limiter = createLimiter({ limits: a.core, store: redisStore({ client: c.ioredis }), prefix });
      return async (id) => (await limiter.consume(id)).allowed;
    },
  },
];

/** Decisions with `IN_FLIGHT` lanes, each on the next key, until `ms` have passed. */
async function drive(decide, keys, ms, state) {
  const until = performance.now() + ms;
  let decisions = 0;
  let refused = 0;
  const lane = async () => {
    while (performance.now() < until) {
      const key = keys[state.cursor];
      state.cursor = (state.cursor + 1) % keys.length;
      decisions++;
      if (!(await decide(key))) refused++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return { decisions, refused, ms: performance.now() - started };
}

/** Touches every key once (scripts loaded, keys written), 50 at a time. */
async function touch(decide, keys) {
  for (let i = 0; i < keys.length; i += IN_FLIGHT) await Promise.all(keys.slice(i, i + IN_FLIGHT).map(decide));
}

/**
 * With --against, each of our rows followed by its twin: the same contender on the ref's built @ratekit/upstash
 * (imported by path; its own @ratekit/redis comes from the ref's worktree).
 */
async function contendersFor(against) {
  if (against === undefined) return CONTENDERS;
  const { Ratelimit: TwinRatelimit } = await import(againstPackageUrl(against, 'upstash'));
  return CONTENDERS.flatMap((c) => (c.id.startsWith('ours-') ? [c, { id: twinOf(c.id), label: `${c.label} @ ${against.short}`, make: ratelimitOn(TwinRatelimit, c.client) }] : [c]));
}

export async function run(options, log) {
  const defaults = options.quick ? QUICK : FULL;
  const counts = { ...defaults, ...scheduleFromEnv(defaults, { rounds: 'BENCH_UPSTASH_ROUNDS', sliceMs: 'BENCH_UPSTASH_SLICE_MS' }, { min: { rounds: 1, sliceMs: 100 } }) };
  const contenders = await contendersFor(options.against);
  const random = seededRandom(options.seed);
  const server = await openRedis();
  const endpoint = startChild(ENDPOINT, { label: 'upstash endpoint' });
  const admin = await adminClient(server.url);
  const ioredis = new Redis(server.url);
  const results = {};
  try {
    const { url, token } = await endpoint.request({ cmd: 'start', url: server.url });
    // The incumbent's client as Upstash's docs build it; automatic pipelining off, so each decision is its own request for both.
    const upstash = new UpstashRedis({ url, token, enableAutoPipelining: false });
    const clients = { upstash, ioredis };
    log(`upstash: redis ${server.url} (Redis ${server.version}), REST endpoint ${url}`);
    const keys = Array.from({ length: counts.keys }, (_, i) => `client-${i}`);
    for (const algorithm of ALGORITHMS) {
      const deciders = new Map(contenders.map((c) => [c.id, c.make(algorithm, clients, `bench-upstash:${algorithm.id}:${c.id}`)]));
      for (const [id, decide] of deciders) {
        log(`upstash, ${algorithm.id}: touching ${keys.length} keys with ${id}`);
        await touch(decide, keys);
      }
      const slices = new Map(contenders.map((c) => [c.id, []]));
      for (let round = 1; round <= counts.rounds; round++) {
        log(`upstash, ${algorithm.id}: round ${round}/${counts.rounds}`);
        const order = [...contenders].sort(() => random() - 0.5);
        for (const c of order) {
          const state = { cursor: 0 };
          const requestsBefore = (await endpoint.request({ cmd: 'requests' })).requests;
          const before = await readCounters(admin);
          const cpuBefore = process.cpuUsage();
          const slice = await drive(deciders.get(c.id), keys, counts.sliceMs, state);
          const cpu = process.cpuUsage(cpuBefore);
          const delta = counterDelta(before, await readCounters(admin));
          const requests = (await endpoint.request({ cmd: 'requests' })).requests - requestsBefore;
          const commands = Object.values(delta.commands).reduce((n, x) => n + x.calls, 0);
          slices.get(c.id).push({
            rate: (slice.decisions / slice.ms) * 1_000,
            refused: slice.refused,
            requests: requests / slice.decisions,
            commands: commands / slice.decisions,
            redisCpuUs: delta.cpuUs / slice.decisions,
            clientCpuUs: (cpu.user + cpu.system) / slice.decisions,
          });
        }
      }
      results[algorithm.id] = Object.fromEntries(
        contenders.map((c) => {
          const s = slices.get(c.id);
          const pick = (f) => median(s.map(f));
          return [
            c.id,
            {
              rate: pick((x) => x.rate),
              requests: pick((x) => x.requests),
              commands: pick((x) => x.commands),
              redisCpuUs: pick((x) => x.redisCpuUs),
              clientCpuUs: pick((x) => x.clientCpuUs),
              refused: s.reduce((n, x) => n + x.refused, 0),
              rounds: s.map((x) => x.rate),
            },
          ];
        }),
      );
    }
  } finally {
    await endpoint.request({ cmd: 'stop' }).catch(() => {});
    await endpoint.close();
    ioredis.disconnect();
    admin.disconnect();
    await server.stop();
  }
  const against = options.against === undefined ? undefined : { ref: options.against.ref, short: options.against.short };
  return { config: { ...counts, inFlight: IN_FLIGHT, seed: options.seed, against, contenders: contenders.map(({ id, label }) => ({ id, label })) }, results };
}

export function render(results) {
  const { config } = results;
  const rows = [];
  for (const [algorithm, byContender] of Object.entries(results.results)) {
    const incumbent = byContender['incumbent-http'];
    const redis = byContender['redis-tcp'];
    for (const { id, label } of config.contenders) {
      const r = byContender[id];
      rows.push([
        algorithm,
        id === 'incumbent-http' ? `**${label}**` : label,
        r.refused === 0 ? 'ok' : `${r.refused} refused`,
        untwinned(id).endsWith('-tcp') ? '–' : r.requests.toFixed(2),
        r.commands.toFixed(2),
        r.redisCpuUs.toFixed(2),
        formatFixed(r.clientCpuUs, 2),
        formatRate(r.rate),
        `${(r.rate / incumbent.rate).toFixed(2)}×`,
        untwinned(id) === 'ours-tcp' ? `${(r.rate / redis.rate).toFixed(2)}×` : '',
      ]);
    }
  }
  const table = renderTable(
    [
      { title: 'algorithm' },
      { title: 'contender' },
      { title: 'sanity' },
      { title: 'HTTP requests / decision', align: 'right' },
      { title: 'Redis commands / decision', align: 'right' },
      { title: 'Redis CPU µs / decision', align: 'right' },
      { title: 'client CPU µs / decision', align: 'right' },
      { title: `decisions/s, ${config.inFlight} in flight`, align: 'right' },
      { title: '÷ @upstash/ratelimit', align: 'right' },
      { title: '÷ @ratekit/redis, TCP', align: 'right' },
    ],
    rows,
  );
  const intro = [
    '## @ratekit/upstash against @upstash/ratelimit (issue 39)',
    '',
    `A private redis-server; a local Upstash REST endpoint in front of it, in its own process (@ratekit/test-utils' upstash-rest-server.ts, the same for both HTTP rows). ` +
      `Per algorithm, every contender touches ${config.keys} identifiers once, then ${config.rounds} round(s) of ${config.sliceMs} ms slices, contenders shuffled per round (seed ${config.seed}), ` +
      `${config.inFlight} decisions in flight, each on the next identifier; limits never reached. Figures: medians over rounds. ` +
      'Redis commands count every command the server ran (those a script calls included), from INFO commandstats; Redis CPU from INFO cpu; ' +
      "client CPU is the bench process's own (`process.cpuUsage`) over the slice: the limiter and its Redis client, not the REST endpoint's process. Both HTTP rows use `@upstash/redis` with automatic pipelining off.",
  ].join('\n');
  return `${intro}\n\n${table}${config.against === undefined ? '' : `\n\n${againstTable(results)}`}`;
}

/** This commit against the ref: per algorithm and row, the median over rounds of the per-round rate ratio (both ran in every round). */
function againstTable(results) {
  const { config } = results;
  const rows = [];
  for (const [algorithm, byContender] of Object.entries(results.results)) {
    for (const { id, label } of config.contenders) {
      if (isTwin(id) || byContender[twinOf(id)] === undefined) continue;
      const ours = byContender[id];
      const twin = byContender[twinOf(id)];
      const ratio = summary(ours.rounds.map((rate, i) => rate / twin.rounds[i]));
      rows.push([
        algorithm,
        label,
        `${ratio.median.toFixed(3)}× [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`,
        `${ours.redisCpuUs.toFixed(2)} / ${twin.redisCpuUs.toFixed(2)}`,
        `${formatFixed(ours.clientCpuUs, 2)} / ${formatFixed(twin.clientCpuUs, 2)}`,
        `${ours.commands.toFixed(2)} / ${twin.commands.toFixed(2)}`,
      ]);
    }
  }
  return [
    `### This commit against ${config.against.ref} (${config.against.short})`,
    '',
    renderTable(
      [
        { title: 'algorithm' },
        { title: 'contender' },
        { title: 'decisions/s ÷ twin, median [range] of rounds', align: 'right' },
        { title: 'Redis CPU µs / decision, ours / twin', align: 'right' },
        { title: 'client CPU µs / decision, ours / twin', align: 'right' },
        { title: 'Redis commands / decision, ours / twin', align: 'right' },
      ],
      rows,
    ),
  ].join('\n');
}
