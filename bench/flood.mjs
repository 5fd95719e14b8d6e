// Part "flood": one client floods one key far over its limit (issue 26 §4).
//
// Per framework (express, fastify, koa), one server process per limiter, all on
// one private Redis: ours on the memory store (the reference refusal), ours on
// @ratekit/redis with its default options (the in-process refusal cache, when
// the build has one) and with the cache off, and rate-limiter-flexible on Redis
// with `inMemoryBlockOnConsumed`. This process floods each one in turn with
// autocannon (50 connections, every request from 127.0.0.1, so one key) under
// a fixed window of LIMIT per WINDOW_MS: almost every response is a 429.
// Around every slice: the server's CPU time and Redis' INFO commandstats and
// cpu, so commands and CPU belong to the one server being flooded.
// Method and how to read the table: bench/notes/attack-and-fleet.md.

import { loadCore } from './lib/core.mjs';
import { formatFixed, formatMs, formatPercent, formatRate, formatRatio, formatSigned, renderTable } from './lib/format.mjs';
import { isTwin, twinOf, twinProcess, untwinned } from './lib/against.mjs';
import { CONNECTIONS, probe, startServer } from './lib/http-load.mjs';
import { scheduleFromEnv } from './lib/options.mjs';
import { appEnvironment, appScript, refusalCacheSupport } from './lib/redis-apps.mjs';
import { eachFrameworkOnRedis, loadAverageNow, loadSliceWithRedis, SCRIPT_COMMANDS } from './lib/redis-load.mjs';
import { storeVersions } from './lib/store-redis.mjs';
import { median, seededRandom, shuffled, summary } from './lib/stats.mjs';

/**
 * The issue's targets: at most one refusal call per refusal period and process, judged on all script calls per period
 * (admissions included: a period's admissions need at least one call, so ≤ 2 in all); server CPU per refused response ÷
 * the memory store's. Calls are counted, not decisions: coalesced decisions share one call, so "calls − admissions" means nothing.
 * Issue 31 §2: our Redis row with the refusal cache on and the headers off serves at least 0.98× the bare server's req/s
 * (a cached refusal should cost what a Map lookup costs); beside it, the default row's gap to it is what the headers cost.
 */
export const TARGET = { callsPerPeriod: 2, cpuVsMemory: 1.2, rateVsBareHeadersOff: 0.98 };

/** The flooded limit: a fixed window of LIMIT requests per WINDOW_MS. A refused key may pass again when its window ends: the refusal period. */
export const LIMIT = 10;
export const WINDOW_MS = 1_000;

/** Full run: 10 s of flood per limiter and framework, in `rounds` slices. `--quick`: a smoke run. */
const FULL = { floodMs: 10_000, rounds: 5, warmupMs: 2_000, connections: CONNECTIONS };
const QUICK = { floodMs: 1_500, rounds: 2, warmupMs: 400, connections: CONNECTIONS };

const FRAMEWORKS = ['express', 'fastify', 'koa'];
const ADAPTER = { express: '@ratekit/express', fastify: '@ratekit/fastify', koa: '@ratekit/koa' };
const INCUMBENT = { express: 'express-rate-limit + rate-limit-redis', fastify: '@fastify/rate-limit, redis', koa: 'koa-ratelimit, redis driver' };
const MEMORY = 'ratekit-memory';
const BARE = 'bare';
const DEFAULT_ROW = 'ratekit-redis';
const HEADERS_OFF_ROW = 'ratekit-redis-noheaders';
const FRAMEWORK_NAME = { express: 'Express 5', fastify: 'Fastify 5', koa: 'Koa 3' };
/** What the headers-off row turns off (lib/redis-apps.mjs's HEADERS_OFF). */
const HEADERS_OFF_TEXT = {
  express: '`standardHeaders: false, legacyHeaders: false`: no header',
  fastify: '`standardHeaders: false, legacyHeaders: false`: no header',
  koa: '`standardHeaders: false, legacyHeaders: false`: Retry-After only, which koa-ratelimit always sends',
};

/**
 * The rows of a framework. `default`: run without `--variants`. `incumbent` is on request: its
 * stores have no refusal cache, so it says what the flood costs without one, as `nocache` does.
 */
function rowsOf(framework, cache) {
  return [
    { id: BARE, limiter: `${FRAMEWORK_NAME[framework]}, no limiter (200, hello world)`, role: 'bare', default: true },
    { id: MEMORY, limiter: `${ADAPTER[framework]}, memory store`, role: 'reference', default: true },
    {
      id: 'ratekit-redis',
      limiter: `${ADAPTER[framework]}, Redis, ${cache.supported ? 'refusal cache on (default)' : 'default options (this build has no refusal cache)'}`,
      role: 'ours',
      default: true,
    },
    {
      id: HEADERS_OFF_ROW,
      limiter: `${ADAPTER[framework]}, Redis, ${cache.supported ? 'refusal cache on' : 'default options'}, headers off (${HEADERS_OFF_TEXT[framework]})`,
      role: 'ours-noheaders',
      default: true,
    },
    {
      id: 'ratekit-redis-nocache',
      limiter: `${ADAPTER[framework]}, Redis, refusal cache off (store passed as \`shared: false\`)`,
      role: 'ours-nocache',
      default: true,
      skip: cache.supported ? undefined : `this build has no refusal cache (the core refuses \`${cache.option}\`)`,
    },
    { id: 'rlflex-redis', limiter: `rate-limiter-flexible RateLimiterRedis, inMemoryBlockOnConsumed ${LIMIT + 1}`, role: 'peer', default: true },
    { id: 'incumbent-redis', limiter: INCUMBENT[framework], role: 'incumbent', default: false },
  ];
}

/**
 * `--variants` names frameworks (`koa`), row ids (`rlflex-redis`, `incumbent-redis`) or both
 * (`koa/incumbent-redis`). The memory and bare rows, the ratios' references, always run.
 */
function selectRows(variants, cache) {
  const out = [];
  const named = (variants ?? []).filter((v) => !FRAMEWORKS.includes(v) && !v.includes('/'));
  const frameworks = (variants ?? []).filter((v) => FRAMEWORKS.includes(v) || v.includes('/')).map((v) => v.split('/')[0]);
  for (const framework of FRAMEWORKS) {
    if (frameworks.length > 0 && !frameworks.includes(framework) && named.length === 0) continue;
    const rows = rowsOf(framework, cache).filter(
      (r) =>
        r.id === MEMORY ||
        r.id === BARE ||
        (variants === undefined
          ? r.default
          : variants.includes(`${framework}/${r.id}`) || named.includes(r.id) || (variants.includes(framework) && (named.length === 0 ? r.default : named.includes(r.id)))),
    );
    if (rows.length > 1) out.push({ framework, rows });
  }
  return out;
}

export async function run(options, log) {
  const schedule = scheduleFromEnv(
    options.quick ? QUICK : FULL,
    // Connections: how many requests the flooding client keeps in flight (1: the floor of the refusal calls per period).
    { floodMs: 'BENCH_FLOOD_MS', rounds: 'BENCH_FLOOD_ROUNDS', warmupMs: 'BENCH_FLOOD_WARMUP_MS', connections: 'BENCH_FLOOD_CONNECTIONS' },
    { min: { floodMs: 200, rounds: 1, connections: 1 } },
  );
  const sliceMs = Math.round(schedule.floodMs / schedule.rounds);
  const cache = await refusalCacheSupport(loadCore);
  const chosen = withTwin(selectRows(options.variants, cache), options.against);
  if (chosen.length === 0) throw new Error(`--variants=${options.variants?.join(',')} names no flood row`);
  const random = seededRandom(options.seed);
  const ran = await eachFrameworkOnRedis('flood', chosen, log, (on) => runFramework({ ...on, schedule, sliceMs, random, log, against: options.against }), cache.detail);
  if (ran.skipped) return ran;
  return {
    config: {
      ...schedule,
      sliceMs,
      limit: LIMIT,
      windowMs: WINDOW_MS,
      target: TARGET,
      refusalCache: cache,
      seed: options.seed,
      server: ran.server,
      versions: storeVersions(),
      against: options.against === undefined ? undefined : { ref: options.against.ref, short: options.against.short },
    },
    loadAverage: ran.loadAverage,
    frameworks: ran.frameworks,
  };
}

/** With --against, the default row's twin on the ref's packages (lib/against.mjs), after it. */
function withTwin(chosen, against) {
  if (against === undefined) return chosen;
  return chosen.map(({ framework, rows }) => ({
    framework,
    rows: rows.flatMap((r) => (r.id === DEFAULT_ROW ? [r, { ...r, id: twinOf(r.id), limiter: `${r.limiter} @ ${against.short}`, role: 'twin' }] : [r])),
  }));
}

async function runFramework({ framework, rows, schedule, sliceMs, server, admin, random, log, against }) {
  const env = appEnvironment({ redisUrl: server.url, limit: LIMIT, windowMs: WINDOW_MS });
  const servers = new Map();
  const problems = new Map(rows.map((r) => [r.id, []]));
  const slices = new Map(rows.map((r) => [r.id, []]));
  const out = {};
  try {
    log(`flood, ${framework}: starting ${rows.length} servers`);
    for (const r of rows) {
      if (r.skip) continue;
      try {
        const base = { env, execArgv: ['--no-flush-bytecode', '--no-memory-reducer'] };
        const launch = isTwin(r.id) ? twinProcess(against, base) : base;
        servers.set(r.id, await startServer(appScript(framework), untwinned(r.id), { ...launch, label: `flood ${framework} ${r.id}` }));
      } catch (error) {
        r.skip = `could not start: ${error.message.split('\n')[0]}`;
      }
    }
    const running = rows.filter((r) => !r.skip);
    for (const r of running) {
      const first = await probe(servers.get(r.id).url);
      // The bare and headers-off rows must send no X-RateLimit-Limit; every other row the limit.
      const expected = r.role === 'bare' || r.role === 'ours-noheaders' ? undefined : String(LIMIT);
      if (first.status !== 200 || first.headers['x-ratelimit-limit'] !== expected) problems.get(r.id).push(`probe: ${first.status}, X-RateLimit-Limit ${first.headers['x-ratelimit-limit']}`);
    }
    log(`flood, ${framework}: warming up, ${schedule.warmupMs} ms each`);
    for (const r of running) if (schedule.warmupMs > 0) await measure(servers.get(r.id), admin, schedule.warmupMs, schedule.connections);
    for (let round = 1; round <= schedule.rounds; round++) {
      log(`flood, ${framework}: round ${round}/${schedule.rounds}, ${sliceMs} ms per limiter`);
      const inRound = new Map();
      for (const r of shuffled(running, random)) inRound.set(r.id, await measure(servers.get(r.id), admin, sliceMs, schedule.connections));
      const memory = inRound.get(MEMORY);
      const bare = inRound.get(BARE);
      const headersOff = inRound.get(HEADERS_OFF_ROW);
      for (const [id, slice] of inRound) {
        slice.cpuVsMemory = memory === undefined ? Number.NaN : slice.cpuMicrosPerResponse / memory.cpuMicrosPerResponse;
        slice.rateVsBare = bare === undefined ? Number.NaN : slice.rate / bare.rate;
        slice.cpuOverBare = bare === undefined ? Number.NaN : slice.cpuMicrosPerResponse - bare.cpuMicrosPerResponse;
        // The default row's headers: its CPU per response − the headers-off row's, in the same round.
        slice.headersCost = id === DEFAULT_ROW && headersOff !== undefined ? slice.cpuMicrosPerResponse - headersOff.cpuMicrosPerResponse : Number.NaN;
        slices.get(id).push(slice);
      }
    }
    for (const r of rows) {
      if (r.skip) {
        out[r.id] = { id: r.id, limiter: r.limiter, role: r.role, skipped: r.skip };
        continue;
      }
      out[r.id] = { id: r.id, limiter: r.limiter, role: r.role, ...summarise(r, slices.get(r.id), problems.get(r.id)) };
    }
  } finally {
    await Promise.all([...servers.values()].map((s) => s.close()));
  }
  judge(out);
  return { rows: rows.map((r) => out[r.id]), loadAverage: loadAverageNow() };
}

/** One slice of flood on `server`, with Redis' counters around it. */
async function measure(server, admin, ms, connections) {
  const slice = await loadSliceWithRedis(server, admin, ms, { connections });
  const seconds = slice.ms / 1_000;
  const admitted = slice.statusCounts['200'] ?? 0;
  const { scriptCalls, allCommands: commands } = slice.redis;
  return {
    ...slice,
    admitted,
    refused: slice.statusCounts['429'] ?? 0,
    scriptCalls,
    commands,
    commandsByName: slice.redis.commands,
    scriptCallsPerSecond: scriptCalls / seconds,
    commandsPerSecond: commands / seconds,
    /** Script calls per refusal period of this one process, admissions included. */
    callsPerPeriod: scriptCalls / (slice.ms / WINDOW_MS),
    redisCpuMicrosPerResponse: slice.redis.cpuUs / Math.max(slice.responses, 1),
  };
}

function summarise(r, list, problems) {
  const total = (field) => list.reduce((n, s) => n + s[field], 0);
  const ms = total('ms');
  const responses = total('responses');
  const admitted = total('admitted');
  const scriptCalls = total('scriptCalls');
  const periods = ms / WINDOW_MS;
  const byName = {};
  for (const s of list) for (const [name, n] of Object.entries(s.commandsByName)) byName[name] = (byName[name] ?? 0) + n;
  const found = [...problems];
  for (const s of list) {
    const other = Object.entries(s.statusCounts).filter(([code]) => code !== '200' && code !== '429');
    if (other.length > 0) found.push(`${other.map(([code, n]) => `${n}× ${code}`).join(', ')}`);
    if (s.errors > 0 || s.timeouts > 0) found.push(`${s.errors} errors, ${s.timeouts} timeouts`);
  }
  // A fixed window of LIMIT admits at most LIMIT per window; a slice spans at most ⌈ms / window⌉ + 1 windows.
  const windows = list.reduce((n, s) => n + Math.ceil(s.ms / WINDOW_MS) + 1, 0);
  if (r.role === 'bare') {
    if (total('refused') > 0) found.push(`${total('refused')} refused without a limiter`);
  } else {
    if (admitted > LIMIT * windows) found.push(`${admitted} admitted, more than ${LIMIT} per window allows (${LIMIT * windows})`);
    if (responses > 0 && total('refused') / responses < 0.9) found.push(`only ${formatPercent(total('refused') / responses)} refused`);
  }
  // With the cache off every decision runs in Redis (a fixed window's consume runs one INCR), though coalesced decisions share a call.
  const incr = byName.incr ?? 0;
  if (r.role === 'ours-nocache' && incr < 0.9 * responses) {
    found.push(`${(incr / responses).toFixed(3)} INCR per response with the cache off: the option did not reach the limiter`);
  }
  return {
    sanity: found.length === 0 ? 'ok' : [...new Set(found)].join('; '),
    slices: list.length,
    responses,
    admitted,
    refused: total('refused'),
    rate: median(list.map((s) => s.rate)),
    scriptCallsPerSecond: (scriptCalls / ms) * 1_000,
    commandsPerSecond: (total('commands') / ms) * 1_000,
    commandsPerSecondByName: Object.fromEntries(Object.entries(byName).map(([name, n]) => [name, (n / ms) * 1_000])),
    callsPerPeriod: r.id === MEMORY || r.id === BARE ? undefined : scriptCalls / periods,
    scriptCallsPerResponse: scriptCalls / responses,
    cpuMicrosPerResponse: median(list.map((s) => s.cpuMicrosPerResponse)),
    cpuVsMemory: r.id === MEMORY || r.id === BARE ? undefined : summary(list.map((s) => s.cpuVsMemory).filter(Number.isFinite)),
    rateVsBare: r.id === BARE ? undefined : summary(list.map((s) => s.rateVsBare).filter(Number.isFinite)),
    cpuOverBare: r.id === BARE ? undefined : summary(list.map((s) => s.cpuOverBare).filter(Number.isFinite)),
    headersCost: r.id === DEFAULT_ROW ? summary(list.map((s) => s.headersCost).filter(Number.isFinite)) : undefined,
    redisCpuMicrosPerResponse: median(list.map((s) => s.redisCpuMicrosPerResponse)),
    latency: { p50: median(list.map((s) => s.p50)), p99: median(list.map((s) => s.p99)) },
    serverCpuShare: median(list.map((s) => s.serverCpuShare)),
  };
}

/**
 * The targets, on our default Redis row: refusal calls per period, and CPU per response against the memory row; on
 * the headers-off row (issue 31 §2): req/s against the bare server's.
 */
function judge(out) {
  const off = out[HEADERS_OFF_ROW];
  if (off !== undefined && !off.skipped && off.rateVsBare !== undefined) off.target = { vsBare: off.rateVsBare.median >= TARGET.rateVsBareHeadersOff };
  const ours = out[DEFAULT_ROW];
  if (ours === undefined || ours.skipped) return;
  ours.target = {
    refusalCalls: ours.callsPerPeriod <= TARGET.callsPerPeriod,
    cpu: ours.cpuVsMemory !== undefined && ours.cpuVsMemory.median <= TARGET.cpuVsMemory,
  };
}

export function render(results) {
  if (results.skipped) return `## Flood: one key far over its limit\n\n${results.skipped}.`;
  const { config } = results;
  const rows = [];
  const verdicts = [];
  const versusRef = [];
  for (const [framework, fw] of Object.entries(results.frameworks)) {
    const twin = fw.rows.find((p) => p.id === twinOf(DEFAULT_ROW) && !p.skipped);
    const own = fw.rows.find((p) => p.id === DEFAULT_ROW && !p.skipped);
    if (twin !== undefined && own !== undefined) {
      versusRef.push(
        `${framework}: req/s ÷ bare ${formatFixed(own.rateVsBare.median / twin.rateVsBare.median, 3)}× ${config.against.short}'s; server CPU ${formatSigned(own.cpuMicrosPerResponse - twin.cpuMicrosPerResponse, 1)} µs per response; ` +
          `script calls per refusal period ${formatFixed(own.callsPerPeriod, 2)} against ${formatFixed(twin.callsPerPeriod, 2)}`,
      );
    }
    for (const r of fw.rows) {
      const name = r.role === 'reference' || r.role === 'bare' ? `**${r.limiter}**` : r.role === 'peer' || r.role === 'incumbent' ? `_${r.limiter}_` : r.limiter;
      if (r.skipped) {
        rows.push([framework, name, `not run: ${r.skipped}`, '', '', '', '', '', '', '', '', '', '', '', '']);
        continue;
      }
      const bareRow = r.role === 'bare';
      rows.push([
        framework,
        name,
        r.sanity,
        formatRate(r.rate),
        formatPercent(r.refused / r.responses),
        `${formatFixed(r.scriptCallsPerSecond, 1)} (${scriptNames(r)})`,
        formatFixed(r.commandsPerSecond, 1),
        r.callsPerPeriod === undefined ? '' : `${formatFixed(r.callsPerPeriod, 2)}${r.target?.refusalCalls === undefined ? '' : r.target.refusalCalls ? ' ✓' : ' ✗'}`,
        formatFixed(r.cpuMicrosPerResponse, 1),
        bareRow ? '' : r.cpuVsMemory === undefined ? '1 (ref)' : `${formatRatio(r.cpuVsMemory)}${r.target?.cpu === undefined ? '' : r.target.cpu ? ' ✓' : ' ✗'}`,
        bareRow ? '1 (ref)' : r.rateVsBare === undefined ? 'n/a' : `${formatRatio(r.rateVsBare)}${r.target?.vsBare === undefined ? '' : r.target.vsBare ? ' ✓' : ' ✗'}`,
        bareRow ? '' : formatSpan(r.cpuOverBare),
        r.headersCost === undefined ? '' : formatSpan(r.headersCost),
        formatFixed(r.redisCpuMicrosPerResponse, 2),
        `${formatMs(r.latency.p50)} / ${formatMs(r.latency.p99)}`,
      ]);
      if (r.target?.vsBare !== undefined) {
        const withHeaders = fw.rows.find((p) => p.id === DEFAULT_ROW && !p.skipped);
        verdicts.push(
          `${r.target.vsBare ? '✓' : '✗'} ${framework}: a cached refusal with the headers off serves ${formatRatio(r.rateVsBare)} of the bare server's req/s (target ≥ ${config.target.rateVsBareHeadersOff}×), ` +
            `server CPU ${formatSpan(r.cpuOverBare)} µs per response over bare` +
            (withHeaders === undefined ? '' : `; with the default headers ${formatRatio(withHeaders.rateVsBare)}, the headers costing ${formatSpan(withHeaders.headersCost)} µs per response`),
        );
      }
      if (r.target?.refusalCalls !== undefined) {
        verdicts.push(
          `${r.target.refusalCalls ? '✓' : '✗'} ${framework}: ${formatFixed(r.callsPerPeriod, 2)} script calls per refusal period, admissions included (target ≤ ${config.target.callsPerPeriod}: one for the admissions, one refusal); ` +
            `rate-limiter-flexible ${formatFixed(fw.rows.find((p) => p.id === 'rlflex-redis' && !p.skipped)?.callsPerPeriod, 2)}`,
          `${r.target.cpu ? '✓' : '✗'} ${framework}: server CPU per response on Redis ${formatRatio(r.cpuVsMemory)} of the memory store's (target ≤ ${config.target.cpuVsMemory}×)`,
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
      { title: '429 share', align: 'right' },
      { title: 'Redis script calls/s', align: 'right' },
      { title: 'Redis commands/s (all)', align: 'right' },
      { title: `script calls / refusal period, admissions included (≤ ${config.target.callsPerPeriod})`, align: 'right' },
      { title: 'srv CPU µs/response', align: 'right' },
      { title: `vs memory store (≤ ${config.target.cpuVsMemory}×)`, align: 'right' },
      { title: `req/s vs bare (headers off ≥ ${config.target.rateVsBareHeadersOff ?? 0.98}×)`, align: 'right' },
      { title: 'srv CPU µs/response over bare', align: 'right' },
      { title: "headers' cost µs/response (default − headers off)", align: 'right' },
      { title: 'Redis CPU µs/response', align: 'right' },
      { title: 'lat p50/p99 ms', align: 'right' },
    ],
    rows,
  );
  const v = config.versions;
  const lines = [
    `## Flood: one key far over its limit (Redis ${config.server.version}${config.server.own ? ', private server' : ', REDIS_URL: other clients would count too'})`,
    '',
    `One server process per limiter and framework, all on one Redis; this process floods one at a time with autocannon, ${config.connections} connections from 127.0.0.1 (one key), ` +
      `under a fixed window of ${config.limit} per ${config.windowMs} ms (the refusal period: a refused key may pass when its window ends). ` +
      `Each server gets ${config.warmupMs} ms of flood as warm-up (discarded), then ${config.rounds} slices of ${config.sliceMs} ms (${config.floodMs} ms in all), limiters in a shuffled order per round (seed ${config.seed}). ` +
      `Refusal cache: ${config.refusalCache.detail}.`,
    '',
    "Redis figures are INFO commandstats and INFO cpu deltas around each slice (the parent's INFO left out), so they belong to the flooded server and its one key. " +
      'Script calls = fcall + evalsha + eval (and _ro forms): one per round trip; commands (all) adds what the scripts run inside. ' +
      'Script calls / refusal period = script calls ÷ (flood time ÷ window), admissions included (decisions coalesced into one call count once): what the flood costs Redis, per period, for this one process. ' +
      "srv CPU µs/response = the server process's CPU (user + sys) per response, median over slices (almost every response is a refusal); " +
      "vs memory store = per round, that ÷ the memory-store row's in the same round, median [min–max]. " +
      "req/s vs bare = per round, req/s ÷ the bare server's (no limiter, 200 hello world) in the same round; over bare = srv CPU µs/response − the bare server's; " +
      "headers' cost = per round, the default row's srv CPU µs/response − the headers-off row's (issue 31 §2). " +
      'Sanity: only 200 and 429, no errors, at most the limit admitted per window, ≥ 90 % refused (bare: nothing refused).',
    '',
    table,
    '',
    ...(versusRef.length === 0
      ? []
      : [`This commit against ${config.against.ref} (${config.against.short}), same run (its row: "@ ${config.against.short}"):`, '', ...versusRef.map((line) => `- ${line}`), '']),
    'Targets (issue 26 on our default Redis row; issue 31 §2 on the headers-off row):',
    '',
    ...verdicts.map((line) => `- ${line}`),
    '',
    `Load average at the start: ${results.loadAverage.start.join(' ')}; at the end: ${results.loadAverage.end.join(' ')}. ` +
      `Versions: ioredis ${v.ioredis}, rate-limiter-flexible ${v['rate-limiter-flexible']}, rate-limit-redis ${v['rate-limit-redis']}, @fastify/rate-limit ${v['@fastify/rate-limit']}, koa-ratelimit ${v['koa-ratelimit']}.`,
  ];
  return lines.join('\n');
}

/** A median [min–max] of µs, signed. */
function formatSpan(span) {
  if (span === undefined || !Number.isFinite(span.median)) return 'n/a';
  const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
  return `${signed(span.median)} [${signed(span.min)}…${signed(span.max)}]`;
}

function scriptNames(r) {
  const names = Object.entries(r.commandsPerSecondByName).filter(([name]) => SCRIPT_COMMANDS.includes(name));
  return names.length === 0 ? 'none' : names.map(([name]) => name).join(' + ');
}
