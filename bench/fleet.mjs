// Part "fleet": a fleet of app processes on one Redis, many clients (issue 26 §4).
//
// Per framework (express, fastify; koa on request), one app per row, each a
// node:cluster of WORKERS processes on one port (lib/fleet-cluster.mjs), all
// on one private Redis: the bare app, ours on @ratekit/redis, the incumbent on
// its Redis store, and rate-limiter-flexible's RateLimiterRedis middleware.
// This process loads one app at a time with autocannon (50 connections), each
// request from one of KEYS client addresses in turn (X-Forwarded-For; every app
// trusts 127.0.0.1 as its proxy, so each limiter keys by that address its own default
// way). The limit is never reached: every request is a passing decision.
// Sandwich rounds against the bare app (lib/sandwich.mjs): added latency =
// a row's p50 / p99 − the mean of the two bare slices around it. Redis CPU
// per request from INFO cpu deltas around every slice.
// Method and how to read the table: bench/notes/attack-and-fleet.md.

import { fileURLToPath } from 'node:url';
import { isTwin, twinOf, twinProcess, untwinned } from './lib/against.mjs';
import { startChild } from './lib/child.mjs';
import { formatFixed, formatRate, formatRatio, formatSigned, renderTable } from './lib/format.mjs';
import { CONNECTIONS, probe } from './lib/http-load.mjs';
import { HOST } from './lib/http-server.mjs';
import { scheduleFromEnv } from './lib/options.mjs';
import { appEnvironment, appScript } from './lib/redis-apps.mjs';
import { eachFrameworkOnRedis, loadAverageNow, loadSliceWithRedis } from './lib/redis-load.mjs';
import { describe, runSandwich } from './lib/sandwich.mjs';
import { median, seededRandom, summary } from './lib/stats.mjs';
import { inspectKeys, storeVersions } from './lib/store-redis.mjs';

const CLUSTER = fileURLToPath(new URL('./lib/fleet-cluster.mjs', import.meta.url));

/** The issue's target: ours adds no more p99 latency, and costs Redis no more CPU per request, than the best peer. */
export const TARGET = 'p99 added latency and Redis CPU per request at most the best peer’s';

/** A limit never reached in a run (a fixed window of an hour, so a key's state lives through the run). */
const LIMIT = 1e9;
const WINDOW_MS = 3_600_000;

/** Full run: about 3 minutes on 2 cores, alone. `--quick`: a smoke run (its slices are too short to compare). */
const FULL = { rounds: 3, sliceMs: 4_000, warmupMs: 2_000, workers: 4, keys: 10_000 };
const QUICK = { rounds: 1, sliceMs: 1_000, warmupMs: 500, workers: 4, keys: 2_000 }; // 10k first requests per app would take most of a smoke run

const BARE = 'bare';
const FRAMEWORKS = {
  express: [
    [BARE, 'bare (no limiter)'],
    ['ratekit-redis', '@ratekit/express, Redis'],
    ['incumbent-redis', 'express-rate-limit + rate-limit-redis'],
    ['rlflex-redis', 'rate-limiter-flexible RateLimiterRedis, minimal middleware'],
  ],
  fastify: [
    [BARE, 'bare (no limiter)'],
    ['ratekit-redis', '@ratekit/fastify, Redis'],
    ['incumbent-redis', '@fastify/rate-limit, redis (ioredis)'],
    ['rlflex-redis', 'rate-limiter-flexible RateLimiterRedis, minimal hook'],
  ],
  koa: [
    [BARE, 'bare (no limiter)'],
    ['ratekit-redis', '@ratekit/koa, Redis'],
    ['incumbent-redis', 'koa-ratelimit, redis driver'],
    ['rlflex-redis', 'rate-limiter-flexible RateLimiterRedis, minimal middleware'],
  ],
};
const DEFAULT_FRAMEWORKS = ['express', 'fastify'];

/** `--variants`: frameworks (`koa` adds it), row ids (`rlflex-redis`), or `koa/rlflex-redis`. The bare row always runs. */
function selectRows(variants) {
  const out = [];
  const names = Object.keys(FRAMEWORKS);
  const named = (variants ?? []).filter((v) => !names.includes(v) && !v.includes('/'));
  const frameworks = (variants ?? []).filter((v) => names.includes(v) || v.includes('/')).map((v) => v.split('/')[0]);
  for (const framework of names) {
    const wanted = frameworks.length > 0 ? frameworks.includes(framework) : DEFAULT_FRAMEWORKS.includes(framework);
    if (!wanted) continue;
    const rows = FRAMEWORKS[framework]
      .map(([id, limiter]) => ({ id, limiter, ours: id.startsWith('ratekit'), peer: id !== BARE && !id.startsWith('ratekit') }))
      .filter((r) => r.id === BARE || variants === undefined || variants.includes(`${framework}/${r.id}`) || named.includes(r.id) || (named.length === 0 && variants.includes(framework)));
    if (rows.length > 1) out.push({ framework, rows });
  }
  return out;
}

/** The address of client `i` of `keys`: 10.x.y.z, one per key. */
function clientAddress(i) {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

/** autocannon's requests: GET / from the next client in turn (one counter for every connection). */
function rotatingClients(keys) {
  let next = 0;
  return [
    {
      method: 'GET',
      path: '/',
      setupRequest: (request) => {
        request.headers = { ...request.headers, 'x-forwarded-for': clientAddress(next) };
        next = (next + 1) % keys;
        return request;
      },
    },
  ];
}

export async function run(options, log) {
  const schedule = scheduleFromEnv(
    options.quick ? QUICK : FULL,
    { rounds: 'BENCH_FLEET_ROUNDS', sliceMs: 'BENCH_FLEET_SLICE_MS', warmupMs: 'BENCH_FLEET_WARMUP_MS', workers: 'BENCH_FLEET_WORKERS', keys: 'BENCH_FLEET_KEYS' },
    { min: { rounds: 1, sliceMs: 200, workers: 1, keys: 1 } },
  );
  const chosen = withTwins(selectRows(options.variants), options.against);
  if (chosen.length === 0) throw new Error(`--variants=${options.variants?.join(',')} names no fleet row`);
  const random = seededRandom(options.seed);
  const ran = await eachFrameworkOnRedis('fleet', chosen, log, (on) => runFramework({ ...on, schedule, random, log, against: options.against }));
  if (ran.skipped) return ran;
  return {
    config: {
      ...schedule,
      connections: CONNECTIONS,
      limit: LIMIT,
      windowMs: WINDOW_MS,
      target: TARGET,
      seed: options.seed,
      server: ran.server,
      versions: storeVersions(),
      against: options.against === undefined ? undefined : { ref: options.against.ref, short: options.against.short },
    },
    loadAverage: ran.loadAverage,
    frameworks: ran.frameworks,
  };
}

/** With --against, each of our rows followed by its twin on the ref's packages (lib/against.mjs). */
function withTwins(chosen, against) {
  if (against === undefined) return chosen;
  return chosen.map(({ framework, rows }) => ({
    framework,
    rows: rows.flatMap((r) => (r.ours ? [r, { ...r, id: twinOf(r.id), limiter: `${r.limiter} @ ${against.short}`, ours: false, twin: true }] : [r])),
  }));
}

/** One app: a cluster primary (a child of ours) and its workers. Answers as lib/http-load.mjs's startServer does. */
async function startFleet(framework, id, workers, env, against) {
  const base = { env, execArgv: ['--no-flush-bytecode', '--no-memory-reducer'] };
  const launch = isTwin(id) ? twinProcess(against, base) : base;
  const child = startChild(CLUSTER, { args: [appScript(framework), untwinned(id), String(workers)], ...launch, label: `fleet ${framework} ${id}` });
  try {
    const { port } = await child.request({ cmd: 'listen' });
    return { port, url: `http://${HOST}:${port}/`, usage: async () => (await child.request({ cmd: 'usage' })).cpuMicros, close: () => child.close() };
  } catch (error) {
    await child.close();
    throw error;
  }
}

async function runFramework({ framework, rows, schedule, server, admin, random, log, against }) {
  const env = appEnvironment({ redisUrl: server.url, limit: LIMIT, windowMs: WINDOW_MS, trustProxy: true });
  const requests = rotatingClients(schedule.keys);
  const apps = new Map();
  const problems = new Map(rows.map((r) => [r.id, []]));
  const note = (id, found) => {
    const list = problems.get(id);
    for (const p of found) if (!list.includes(p)) list.push(p);
  };
  const measure = async (id, { ms = schedule.sliceMs, amount } = {}) => {
    const responseTimes = [];
    const slice = await loadSliceWithRedis(apps.get(id), admin, ms, { requests, responseTimes, amount });
    const other = Object.entries(slice.statusCounts).filter(([code]) => code !== '200');
    if (other.length > 0) note(id, [`${other.map(([code, n]) => `${n}× ${code}`).join(', ')} (expected 200)`]);
    if (slice.errors > 0 || slice.timeouts > 0) note(id, [`${slice.errors} errors, ${slice.timeouts} timeouts`]);
    return {
      rate: slice.rate,
      responses: slice.responses,
      p50: percentile(responseTimes, 0.5),
      p99: percentile(responseTimes, 0.99),
      appCpuMicrosPerRequest: slice.cpuMicrosPerResponse,
      redisCpuMicrosPerRequest: slice.redis.cpuUs / Math.max(slice.responses, 1),
      scriptCallsPerRequest: slice.redis.scriptCalls / Math.max(slice.responses, 1),
      commandsPerRequest: slice.redis.allCommands / Math.max(slice.responses, 1),
    };
  };
  try {
    log(`fleet, ${framework}: starting ${rows.length} apps of ${schedule.workers} processes`);
    for (const r of rows) apps.set(r.id, await startFleet(framework, r.id, schedule.workers, env, against));
    for (const r of rows) {
      const first = await probe(apps.get(r.id).url, { 'x-forwarded-for': clientAddress(0) }); // a client of the load: no key of its own
      const limitHeader = first.headers['x-ratelimit-limit'];
      if (first.status !== 200) note(r.id, [`probe: ${first.status}`]);
      if (r.id === BARE ? limitHeader !== undefined : limitHeader !== String(LIMIT)) note(r.id, [`probe: X-RateLimit-Limit ${limitHeader}`]);
    }
    log(`fleet, ${framework}: warming up: ${schedule.keys} requests (every key), then ${schedule.warmupMs} ms, each app`);
    for (const r of rows) {
      await measure(r.id, { amount: schedule.keys }); // one request from every client, in turn: every key touched
      if (schedule.warmupMs > 0) await measure(r.id, { ms: schedule.warmupMs });
    }

    // Each row's p50 / p99 against the mean of the bare slices just before and after it.
    const added = new Map(rows.map((r) => [r.id, { p50: [], p99: [] }]));
    let lastBare;
    let pending;
    let lastRound = 0;
    const raw = await runSandwich({
      baseline: BARE,
      variants: rows.filter((r) => r.id !== BARE).map((r) => r.id),
      rounds: schedule.rounds,
      random,
      measure,
      onSlice: ({ round, id, slice }) => {
        if (round !== lastRound) log(`fleet, ${framework}: round ${(lastRound = round)}/${schedule.rounds}`);
        if (id !== BARE) {
          pending = { id, slice };
          return;
        }
        if (pending !== undefined && lastBare !== undefined) {
          const a = added.get(pending.id);
          a.p50.push(pending.slice.p50 - (lastBare.p50 + slice.p50) / 2);
          a.p99.push(pending.slice.p99 - (lastBare.p99 + slice.p99) / 2);
        }
        pending = undefined;
        lastBare = slice;
      },
    });
    // Every client's key, and no other, under each limiter's prefix (`bench:<limiter>:`).
    const held = await inspectKeys(admin, 'bench:*', (key) => key.split(':')[1], 0);
    const out = rows.map((r) => {
      const entry = raw.get(r.id);
      const slices = entry.slices;
      const keys = held.get(r.id)?.count ?? 0;
      if (r.id !== BARE && keys !== schedule.keys) note(r.id, [`Redis holds ${keys} keys of it, expected ${schedule.keys}`]);
      const found = problems.get(r.id);
      const a = added.get(r.id);
      return {
        ...r,
        ...describe(entry, r.id === BARE),
        sanity: found.length === 0 ? 'ok' : found.join('; '),
        keys,
        p50: median(slices.map((s) => s.p50)),
        p99: median(slices.map((s) => s.p99)),
        added: r.id === BARE ? undefined : { p50: summary(a.p50), p99: summary(a.p99) },
        appCpuMicrosPerRequest: median(slices.map((s) => s.appCpuMicrosPerRequest)),
        redisCpuMicrosPerRequest: median(slices.map((s) => s.redisCpuMicrosPerRequest)),
        scriptCallsPerRequest: median(slices.map((s) => s.scriptCallsPerRequest)),
        commandsPerRequest: median(slices.map((s) => s.commandsPerRequest)),
      };
    });
    judge(out);
    return { rows: out, loadAverage: loadAverageNow() };
  } finally {
    await Promise.all([...apps.values()].map((app) => app.close()));
  }
}

/** Ours against the best peer of the framework on each figure: p99 added latency, Redis CPU per request. */
function judge(rows) {
  const peers = rows.filter((r) => r.peer);
  if (peers.length === 0) return;
  const bestP99 = peers.reduce((a, b) => (b.added.p99.median < a.added.p99.median ? b : a));
  const bestCpu = peers.reduce((a, b) => (b.redisCpuMicrosPerRequest < a.redisCpuMicrosPerRequest ? b : a));
  for (const r of rows.filter((row) => row.ours)) {
    r.target = {
      p99: r.added.p99.median <= bestP99.added.p99.median,
      p99Peer: bestP99.id,
      redisCpu: r.redisCpuMicrosPerRequest <= bestCpu.redisCpuMicrosPerRequest,
      redisCpuPeer: bestCpu.id,
    };
  }
}

export function render(results) {
  if (results.skipped) return `## Fleet: app processes on one Redis\n\n${results.skipped}.`;
  const { config } = results;
  const rows = [];
  const verdicts = [];
  const versusRef = [];
  for (const [framework, fw] of Object.entries(results.frameworks)) {
    const byId = new Map(fw.rows.map((r) => [r.id, r]));
    for (const r of fw.rows) {
      const twin = byId.get(twinOf(r.id));
      if (twin !== undefined) {
        versusRef.push(
          `${framework}, ${r.limiter}: req/s ÷ bare ${formatFixed(r.ratio.median / twin.ratio.median, 3)}× ${config.against.short}'s; ` +
            `p99 added ${formatSigned(r.added.p99.median - twin.added.p99.median, 2)} ms, app CPU ${formatSigned(r.appCpuMicrosPerRequest - twin.appCpuMicrosPerRequest, 1)} µs/req, ` +
            `Redis CPU ${formatSigned(r.redisCpuMicrosPerRequest - twin.redisCpuMicrosPerRequest, 2)} µs/req, commands ${formatFixed(r.commandsPerRequest, 2)} against ${formatFixed(twin.commandsPerRequest, 2)} per request`,
        );
      }
      const name = r.id === BARE ? `**${r.limiter}**` : r.peer ? `_${r.limiter}_` : r.limiter;
      rows.push([
        framework,
        name,
        r.sanity,
        formatRate(r.rate),
        r.id === BARE ? '1 (ref)' : formatRatio(r.ratio),
        `${formatFixed(r.p50, 2)} / ${formatFixed(r.p99, 2)}`,
        r.added === undefined ? '' : `${formatSigned(r.added.p50.median, 2)} [${formatSigned(r.added.p50.min, 2)}…${formatSigned(r.added.p50.max, 2)}]`,
        r.added === undefined ? '' : `${formatSigned(r.added.p99.median, 2)} [${formatSigned(r.added.p99.min, 2)}…${formatSigned(r.added.p99.max, 2)}]${r.target ? (r.target.p99 ? ' ✓' : ' ✗') : ''}`,
        `${formatFixed(r.redisCpuMicrosPerRequest, 2)}${r.target ? (r.target.redisCpu ? ' ✓' : ' ✗') : ''}`,
        `${formatFixed(r.scriptCallsPerRequest, 2)} / ${formatFixed(r.commandsPerRequest, 2)}`,
        formatFixed(r.appCpuMicrosPerRequest, 1),
      ]);
      if (r.target) {
        const p = byId.get(r.target.p99Peer);
        const c = byId.get(r.target.redisCpuPeer);
        verdicts.push(
          `${r.target.p99 ? '✓' : '✗'} ${framework}: p99 added ${formatSigned(r.added.p99.median, 2)} ms against the best peer's ${formatSigned(p.added.p99.median, 2)} ms (${p.limiter})`,
          `${r.target.redisCpu ? '✓' : '✗'} ${framework}: Redis CPU ${formatFixed(r.redisCpuMicrosPerRequest, 2)} µs per request against the best peer's ${formatFixed(c.redisCpuMicrosPerRequest, 2)} µs (${c.limiter})`,
        );
      }
    }
  }
  const table = renderTable(
    [
      { title: 'framework' },
      { title: 'limiter' },
      { title: 'sanity' },
      { title: 'req/s', align: 'right' },
      { title: 'ratio vs bare', align: 'right' },
      { title: 'lat p50 / p99 ms', align: 'right' },
      { title: 'p50 added ms [min…max]', align: 'right' },
      { title: 'p99 added ms [min…max]', align: 'right' },
      { title: 'Redis CPU µs/req', align: 'right' },
      { title: 'Redis script calls / all commands per req', align: 'right' },
      { title: `app CPU µs/req (${config.workers} workers + primary)`, align: 'right' },
    ],
    rows,
  );
  const v = config.versions;
  return [
    `## Fleet: ${config.workers} app processes on one Redis, ${config.keys.toLocaleString('en')} clients (Redis ${config.server.version}${config.server.own ? ', private server' : ', REDIS_URL: other clients would count too'})`,
    '',
    `Each row is one app: a node:cluster primary and ${config.workers} workers on one port (connections handed out round-robin), each worker with its own ioredis connection, all on one Redis. ` +
      `This process loads one app at a time with autocannon, ${config.connections} connections, each request from the next of ${config.keys.toLocaleString('en')} client addresses in turn (X-Forwarded-For; every app trusts 127.0.0.1 as its proxy, and each limiter keys by client IP its own default way). ` +
      `Limit ${config.limit.toExponential()} per hour, fixed window: never reached, every request passes and writes. ` +
      `Each app gets one request from every client, then ${config.warmupMs} ms of load as warm-up (discarded), then ${config.rounds} sandwich rounds of ${config.sliceMs} ms slices: the bare app before and after every other row, shuffled order (seed ${config.seed}).`,
    '',
    "Latency: every response's time in this process (ms with a fraction), p50 and p99 per slice; added = a row's figure − the mean of the two bare slices around it, median [min…max] over rounds. " +
      'Redis CPU µs/req: INFO cpu (user + sys) delta around each slice ÷ its responses, median over slices; script calls and commands per request from INFO commandstats (all commands: those run inside scripts too). ' +
      'App CPU: every process of the app (user + sys) per response. On 2 shared cores the apps, Redis and the load generator compete for the CPU: latencies are mostly queueing, read the added figures and their range. ' +
      `Sanity: every loaded response was 200 with no errors, a probe saw X-RateLimit-Limit ${config.limit} (none on bare), and Redis holds exactly one key per client under each limiter's prefix.`,
    '',
    table,
    '',
    ...(versusRef.length === 0
      ? []
      : [`This commit against ${config.against.ref} (${config.against.short}), same run (its rows: "@ ${config.against.short}"):`, '', ...versusRef.map((line) => `- ${line}`), '']),
    `Targets (issue 26): ${config.target}, per framework:`,
    '',
    ...verdicts.map((line) => `- ${line}`),
    '',
    `Load average at the start: ${results.loadAverage.start.join(' ')}; at the end: ${results.loadAverage.end.join(' ')}. ` +
      `Versions: ioredis ${v.ioredis}, rate-limiter-flexible ${v['rate-limiter-flexible']}, rate-limit-redis ${v['rate-limit-redis']}, @fastify/rate-limit ${v['@fastify/rate-limit']}, koa-ratelimit ${v['koa-ratelimit']}.`,
  ].join('\n');
}

/** The `q` quantile of `values` (nearest rank). */
function percentile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}
