// Part "http": middleware overhead under HTTP load, bench/notes/method.md §2.
//
// Per framework (express, fastify, koa): one server process per row (bare,
// one empty middleware, ratekit's adapter and the incumbent, each passing and
// refusing), all of a framework's servers side by side, idle unless loaded.
// This process is the load generator (autocannon, 50 connections, pipelining
// 1). Each server gets a warm-up (discarded), then slices of load in sandwich
// rounds: the bare server before and after every other row, shuffled.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { formatMs, formatPercent, formatRate, formatRatio, formatSigned, renderTable } from './lib/format.mjs';
import { isTwin, twinOf, twinProcess, twinScriptOnBun } from './lib/against.mjs';
import { CONNECTIONS, loadSlice, PIPELINING, probe, startServer } from './lib/http-load.mjs';
import { BARE, probeProblems, selectRows, sliceProblems } from './lib/http-scenarios.mjs';
import { scheduleFromEnv } from './lib/options.mjs';
import { describe, runSandwich } from './lib/sandwich.mjs';
import { median, seededRandom, summary } from './lib/stats.mjs';

/** The issue's targets: ours keeps ≥ 0.95× bare req/s passing; refusing costs no more than passing. */
export const TARGET = { passRatio: 0.95, rejectPerPass: 0.97 };

/** The incumbents in bench/notes/method.md §2 (another run), for scale: ratio vs bare passing, reject ÷ pass. */
const PEER = {
  express: { limiter: 'express-rate-limit', pass: 0.807, rejectPerPass: 0.795 },
  fastify: { limiter: '@fastify/rate-limit', pass: 0.759, rejectPerPass: 0.743 },
  koa: { limiter: 'koa-ratelimit', pass: 0.841, rejectPerPass: 0.728 },
};

/**
 * V8 flags of every server process. A row's server waits idle for 20–40 s
 * between its slices, while bare, loaded every other slice, never does, and
 * V8 treats an idle process differently: it drops the bytecode of functions
 * unused for a while (so the next slice starts recompiling the hot path) and
 * its memory reducer shrinks the heap (so the next slice starts with more
 * frequent GCs). Without these flags identical bare servers measured as rows
 * came out +12…+22 µs/req (express) and +2…+8 µs/req (koa) above the bare
 * reference; with them, within the noise. A server under steady traffic is
 * never idle, so the flags remove an artefact of the schedule, not a cost
 * users pay. The `bare, 2nd process` row shows what is left of it.
 */
const SERVER_FLAGS = ['--no-flush-bytecode', '--no-memory-reducer'];

/** Full run: about 6½ minutes on 2 cores. `--quick`: about a minute, a smoke run. */
const FULL = { rounds: 5, sliceMs: 1_500, warmupMs: 3_000 };
const QUICK = { rounds: 2, sliceMs: 500, warmupMs: 1_000 };

/** The part's own schedule (its slices are seconds of HTTP load, not the decision parts' 250 ms): `BENCH_HTTP_*` or the defaults. */
export function httpSchedule(options, env = process.env) {
  return scheduleFromEnv(options.quick ? QUICK : FULL, { rounds: 'BENCH_HTTP_ROUNDS', sliceMs: 'BENCH_HTTP_SLICE_MS', warmupMs: 'BENCH_HTTP_WARMUP_MS' }, { min: { rounds: 1, sliceMs: 100 }, env });
}

/** The Bun binary of the root devDependency `bun` (the binary itself, not node_modules/.bin's shell launcher). */
function bunPath() {
  const path = fileURLToPath(new URL('../node_modules/bun/bin/bun.exe', import.meta.url));
  if (!existsSync(path)) throw new Error(`Bun is not installed (${path}): pnpm install`);
  return path;
}

/** The packages the servers load, as resolved from bench/. */
const PACKAGES = [
  'express',
  'fastify',
  'koa',
  '@ratekit/express',
  '@ratekit/fastify',
  '@ratekit/koa',
  'express-rate-limit',
  '@fastify/rate-limit',
  'koa-ratelimit',
  'rate-limiter-flexible',
  'autocannon',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/throttler',
  '@ratekit/nestjs',
  'hono',
  '@hono/node-server',
  '@ratekit/hono',
  'hono-rate-limiter',
];

function packageVersions() {
  const require = createRequire(import.meta.url);
  const versions = {};
  for (const name of PACKAGES) {
    try {
      // The package's own package.json, found from its entry point (not every package exports ./package.json).
      let dir = require.resolve(name);
      for (;;) {
        const up = dir.slice(0, dir.lastIndexOf('/'));
        if (up === dir) throw new Error('no package.json');
        dir = up;
        try {
          const json = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
          if (json.name === name) {
            versions[name] = json.version;
            break;
          }
        } catch (error) {
          if (error.code !== 'ENOENT') throw error;
        }
      }
    } catch {
      versions[name] = 'not installed';
    }
  }
  return versions;
}

/**
 * Runs every selected framework. Progress goes to `log` (stderr).
 * @returns the figures, JSON-ready
 */
export async function run(options, log) {
  const schedule = httpSchedule(options);
  const random = seededRandom(options.seed);
  const frameworks = {};
  for (const fw of selectRows(options.variants)) {
    frameworks[fw.name] = await runFramework(withTwins(fw, options.against), schedule, options, random, log);
  }
  const against = options.against === undefined ? undefined : { ref: options.against.ref, short: options.against.short };
  return {
    config: { ...schedule, connections: CONNECTIONS, pipelining: PIPELINING, serverFlags: SERVER_FLAGS, seed: options.seed, target: TARGET, peer: PEER, versions: packageVersions(), against },
    frameworks,
  };
}

/** With --against, each of our rows followed by its twin: the same server script on the ref's packages (lib/against.mjs). */
function withTwins(fw, against) {
  if (against === undefined) return fw;
  const twin = (r) => ({ ...r, id: twinOf(r.id), limiter: `${r.limiter} @ ${against.short}`, ours: false, twin: true, passId: r.passId === undefined ? undefined : twinOf(r.passId) });
  return { ...fw, rows: fw.rows.flatMap((r) => (r.ours ? [r, twin(r)] : [r])) };
}

async function runFramework(fw, schedule, options, random, log) {
  const servers = new Map();
  const problems = new Map(fw.rows.map((r) => [r.id, []]));
  const note = (id, found) => {
    const list = problems.get(id);
    for (const p of found) if (!list.includes(p)) list.push(p);
  };
  try {
    log(`http, ${fw.name}: starting ${fw.rows.length} servers`);
    for (const r of fw.rows) {
      const onBun = r.runtime === 'bun';
      // Bun is JavaScriptCore: V8's flags do not apply (and its idle behaviour is its own).
      const execArgv = onBun ? [] : [...SERVER_FLAGS];
      if (options.cpuProfDir && !onBun) execArgv.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`, `--cpu-prof-name=http-${fw.name}-${r.id}.cpuprofile`);
      const launch = r.twin === true && !onBun ? twinProcess(options.against, { execArgv }) : { execArgv };
      const script = r.twin === true && onBun ? twinScriptOnBun(options.against, r.script) : r.script;
      servers.set(r.id, await startServer(script, r.arg, { ...launch, execPath: onBun ? bunPath() : undefined, label: `${fw.name} ${r.id}` }));
    }
    for (const r of fw.rows) {
      const url = servers.get(r.id).url;
      const first = await probe(url);
      const second = r.expect === 'reject' ? await probe(url) : undefined;
      note(r.id, probeProblems(r, first, second));
    }
    // Warm up one server at a time, so no warm-up competes for the cores.
    log(`http, ${fw.name}: warming up, ${schedule.warmupMs} ms each`);
    if (schedule.warmupMs > 0) {
      for (const r of fw.rows) note(r.id, sliceProblems(r, await loadSlice(servers.get(r.id), schedule.warmupMs)));
    }

    // Pair every slice of a row with the bare slices just before and after it.
    const deltas = new Map(fw.rows.map((r) => [r.id, { micros: [], ratios: [] }]));
    const bareSteps = [];
    let lastBare;
    let pending;
    let lastRound = 0;
    const onSlice = ({ round, id, slice }) => {
      if (round !== lastRound) log(`http, ${fw.name}: round ${(lastRound = round)}/${schedule.rounds}`);
      note(
        id,
        sliceProblems(
          fw.rows.find((r) => r.id === id),
          slice,
        ),
      );
      if (id !== BARE) {
        pending = { id, slice };
        return;
      }
      if (pending !== undefined && lastBare !== undefined) {
        const around = (lastBare.cpuMicrosPerResponse + slice.cpuMicrosPerResponse) / 2;
        const d = deltas.get(pending.id);
        d.micros.push(pending.slice.cpuMicrosPerResponse - around);
        d.ratios.push(pending.slice.cpuMicrosPerResponse / around);
        bareSteps.push(Math.abs(slice.cpuMicrosPerResponse - lastBare.cpuMicrosPerResponse));
      }
      pending = undefined;
      lastBare = slice;
    };
    const raw = await runSandwich({
      baseline: BARE,
      variants: fw.rows.filter((r) => r.id !== BARE).map((r) => r.id),
      rounds: schedule.rounds,
      random,
      measure: (id) => loadSlice(servers.get(id), schedule.sliceMs),
      onSlice,
    });

    const rows = {};
    for (const r of fw.rows) {
      const entry = raw.get(r.id);
      const slices = entry.slices;
      const responses = slices.reduce((n, s) => n + s.responses, 0);
      const refused = slices.reduce((n, s) => n + (s.statusCounts['429'] ?? 0), 0);
      const d = deltas.get(r.id);
      const found = problems.get(r.id);
      rows[r.id] = {
        ...describe(entry, r.id === BARE),
        cpuMicrosPerResponse: median(slices.map((s) => s.cpuMicrosPerResponse)),
        delta: r.id === BARE ? undefined : { ...summary(d.micros), values: d.micros, ratio: median(d.ratios) },
        latency: { p50: median(slices.map((s) => s.p50)), p99: median(slices.map((s) => s.p99)) },
        share429: responses === 0 ? Number.NaN : refused / responses,
        cpuShare: { server: median(slices.map((s) => s.serverCpuShare)), load: median(slices.map((s) => s.loadCpuShare)) },
        responses,
        errors: slices.reduce((n, s) => n + s.errors + s.timeouts, 0),
        sanity: found.length === 0 ? 'ok' : found.join('; '),
      };
    }
    // Noise of a paired difference: how far two bare slices a scenario apart differ, µs/req.
    const noiseMicros = median(bareSteps);
    for (const r of fw.rows) judge(r, rows, noiseMicros);
    return {
      noiseMicros,
      rows: fw.rows.map((r) => ({ id: r.id, limiter: r.limiter, scenario: r.scenario, ours: r.ours, twin: r.twin === true, reference: r.reference, dropInFloor: r.dropInFloor, ...rows[r.id] })),
    };
  } finally {
    await Promise.all([...servers.values()].map((s) => s.close()));
  }
}

/** Adds `rejectPerPass` to reject rows, and `target` to ratekit's rows. */
function judge(r, rows, noiseMicros) {
  const figures = rows[r.id];
  const pass = r.passId === undefined ? undefined : rows[r.passId];
  if (pass !== undefined) {
    figures.rejectPerPass = figures.ratio.median / pass.ratio.median;
    // Per round: what refusing costs beyond passing, both against their own bare slices.
    figures.rejectMinusPassMicros = pairedDelta(figures, pass);
  }
  if (!r.ours) return;
  if (r.scenario === 'pass') {
    figures.target = { kind: 'pass', pass: figures.ratio.median >= TARGET.passRatio };
  } else if (pass !== undefined) {
    const byRate = figures.rejectPerPass >= TARGET.rejectPerPass;
    const byCpu = figures.rejectMinusPassMicros.median <= noiseMicros;
    figures.target = { kind: 'reject', pass: byRate || byCpu, byRate, byCpu, noiseMicros };
  }
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { config } = results;
  const tableRows = [];
  const verdicts = [];
  const peerVerdicts = [];
  const versusRef = [];
  for (const [name, fw] of Object.entries(results.frameworks)) {
    const byId = new Map(fw.rows.map((r) => [r.id, r]));
    for (const r of fw.rows) {
      tableRows.push([
        name,
        r.reference ? `**${r.limiter}**` : r.limiter,
        r.scenario,
        r.sanity,
        formatRate(r.rate),
        r.id === BARE ? '1 (ref)' : formatRatio(r.ratio),
        r.rejectPerPass === undefined ? '' : `${r.rejectPerPass.toFixed(3)}×`,
        r.cpuMicrosPerResponse.toFixed(1),
        r.delta === undefined ? '' : `${formatSigned(r.delta.median)} [${formatSigned(r.delta.min, 0)}…${formatSigned(r.delta.max, 0)}] (${r.delta.ratio.toFixed(3)}×)`,
        `${formatMs(r.latency.p50)} / ${formatMs(r.latency.p99)}`,
        formatPercent(r.share429),
        `${formatPercent(r.cpuShare.server)} / ${formatPercent(r.cpuShare.load)}`,
        String(r.errors),
        r.target === undefined ? '' : r.target.pass ? '✓' : '✗',
      ]);
      if (r.target !== undefined) verdicts.push(verdict(name, r, byId, fw.noiseMicros));
    }
    peerVerdicts.push(...againstPeers(name, fw));
    versusRef.push(...againstRef(name, fw, byId, config.against));
  }
  const table = renderTable(
    [
      { title: 'framework' },
      { title: 'limiter' },
      { title: 'scenario' },
      { title: 'sanity' },
      { title: 'req/s', align: 'right' },
      { title: 'ratio vs bare', align: 'right' },
      { title: 'reject ÷ pass', align: 'right' },
      { title: 'srv CPU µs/req', align: 'right' },
      { title: 'Δ µs/req vs bare [min…max]', align: 'right' },
      { title: 'lat p50/p99 ms', align: 'right' },
      { title: '429 share', align: 'right' },
      { title: 'CPU srv/load', align: 'right' },
      { title: 'errors', align: 'right' },
      { title: 'target' },
    ],
    tableRows,
  );
  const noise = Object.entries(results.frameworks)
    .map(([name, fw]) => `${name} ${fw.noiseMicros.toFixed(1)} µs`)
    .join(', ');
  const intro = [
    '## HTTP middleware overhead (autocannon, loopback)',
    '',
    `Server and load generator are separate processes (one server process per row, \`node ${config.serverFlags.join(' ')}\`; this process runs autocannon); all servers of a framework run side by side (idle unless loaded). ` +
      `${config.connections} connections, pipelining ${config.pipelining}; each server gets ${fmtSeconds(config.warmupMs)} of warm-up (discarded), ` +
      `then ${config.rounds} slices of ${fmtSeconds(config.sliceMs)} in sandwich rounds (bare server measured before and after every other row, shuffled order, seed ${config.seed}). ` +
      '"pass": limit 1e9 per hour (never 429); "reject": limit 1 per hour, spent by a probe, so every loaded request gets 429. ' +
      "Every limiter runs with the options a user migrating from the incumbent keeps (the same options as the incumbent's row): client IP key, in-memory store, the default headers (legacy `X-RateLimit-*`, `Retry-After` on 429), the default 429 body. " +
      '"ratekit mode" (express) adds `algorithm: \'fixed-window\'`, so the core limiter decides instead of the express-rate-limit counter. ' +
      '"no-op" = one empty middleware or hook: the floor any adapter pays for being a layer. ' +
      '"rate-limiter-flexible, minimal" = `RateLimiterMemory` in the minimal middleware its wiki shows (fastify: the same as an `onRequest` hook): key = IP, `consume`, 429 `Too Many Requests` on rejection, with the README\'s three legacy `X-RateLimit-*` headers and `Retry-After` on 429 (no options, validation or IPv6 grouping: the cheapest peer to beat). ' +
      '"floor of a drop-in" (express) = that middleware plus what express-rate-limit\'s contract adds to every response, which a drop-in must do: `req.rateLimit` with its hidden `current`, and the `Date` header; a reference row, never the peer to beat, that a row above the peer is also read against. ' +
      '"bare, 2nd process" = a second, identical bare server measured as a row: what the schedule itself does to a row (ideally 1×, Δ 0).',
    '',
    'req/s and latency = median over slices; ratio = median over rounds of (req/s ÷ mean of the two adjacent bare slices), [min–max] over rounds; reject ÷ pass = ratio(reject) ÷ ratio(pass); ' +
      'srv CPU µs/req = server CPU time (user+sys) per response, which does not depend on which process was the bottleneck; ' +
      'Δ µs/req = median over rounds of (row − mean of the adjacent bare slices), [min…max] over rounds, with the paired ratio in brackets. ' +
      'CPU srv/load = share of one core used by the server / the load generator (together near 2 cores: req/s is shared-CPU-bound, trust µs/req more). ' +
      `Noise of a paired µs/req difference (median |difference| between the two bare slices around a row): ${noise}. ` +
      'sanity: `ok` when a probe before any load got 200 with the expected headers (a reject row: then 429 with Retry-After), and every loaded response had the expected status with no errors.',
    '',
    `For scale, the incumbents in bench/notes/method.md §2 (another run): ratio vs bare passing ${Object.values(config.peer)
      .map((p) => `${p.pass}× (${p.limiter})`)
      .join(', ')}; ` +
      `reject ÷ pass ${Object.values(config.peer)
        .map((p) => `${p.rejectPerPass}×`)
        .join(', ')}.`,
  ].join('\n');
  const targets = [
    '',
    `Targets (issue 3): pass path ≥ ${config.target.passRatio}× bare req/s on every framework; reject path no costlier than the pass path ` +
      `(reject ÷ pass ≥ ${config.target.rejectPerPass}× by req/s, or Δ µs/req of reject − pass, paired per round, within the noise above):`,
    '',
    ...verdicts.map((v) => `- ${v}`),
    '',
    'Targets (issue 9): each of our rows adds no more server CPU per response (Δ µs/req) than the cheapest peer of the same scenario in this run. ' +
      "✓: its median Δ is at most the peer's; ≈: above it, but its paired per-round difference (ours − that peer, each against its own bare slices) is within the noise above, " +
      'so this run cannot tell the two apart (bench/icount/http.mjs counts instructions instead); ✗: above it by more than the noise.',
    '',
    ...peerVerdicts.map((v) => `- ${v}`),
    ...(config.against === undefined
      ? []
      : [
          '',
          `This commit against ${config.against.ref} (${config.against.short}), same run (its rows: "@ ${config.against.short}"): ratio = ours ÷ its req/s ratio vs bare; ` +
            'paired Δ = ours − its Δ µs/req, per round (each against its own bare slices), median [min…max]; within the noise above, this run cannot tell the two apart.',
          '',
          ...versusRef.map((v) => `- ${v}`),
        ]),
  ];
  const versions = Object.entries(config.versions ?? {})
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  return `${intro}\n\n${table}\n${targets.join('\n')}\n\nHTTP part: ${versions}.`;
}

function verdict(name, r, byId, noiseMicros) {
  const mark = r.target.pass ? '✓' : '✗';
  if (r.target.kind === 'pass') {
    const twin = byId.get('bare2');
    const offset = twin === undefined ? '' : `; the bare server's twin measures ${formatRatio(twin.ratio)}, Δ ${formatSigned(twin.delta.median)} µs/req`;
    return `${mark} ${name}, ${r.limiter}, pass: ${formatRatio(r.ratio)} of bare (Δ ${formatSigned(r.delta.median)} µs/req${offset})`;
  }
  const pass = byId.get(r.id.replace(/-reject$/, '-pass'));
  const d = r.rejectMinusPassMicros;
  return (
    `${mark} ${name}, ${r.limiter}, reject: ${r.rejectPerPass.toFixed(3)}× of pass by req/s${r.target.byRate ? ' ✓' : ''}; ` +
    `Δ µs/req reject ${formatSigned(r.delta.median)} vs pass ${formatSigned(pass.delta.median)}, paired reject − pass ${formatSigned(d.median)} [${formatSigned(d.min, 0)}…${formatSigned(d.max, 0)}] ` +
    `against noise ${noiseMicros.toFixed(1)}${r.target.byCpu ? ' ✓' : ''}`
  );
}

/**
 * Issue 9's HTTP target for each of our rows of `fw`: against the peer row (neither ours nor a
 * reference row) of the same scenario with the least median Δ µs/req, paired per round.
 */
function againstPeers(name, fw) {
  const lines = [];
  for (const r of fw.rows) {
    if (!r.ours || r.delta === undefined) continue;
    const peers = fw.rows.filter((p) => !p.ours && !p.twin && !p.reference && p.scenario === r.scenario && p.delta !== undefined);
    if (peers.length === 0) continue;
    const cheapest = peers.reduce((a, b) => (b.delta.median < a.delta.median ? b : a));
    const paired = pairedDelta(r, cheapest);
    const mark = r.delta.median <= cheapest.delta.median ? '✓' : paired.median <= fw.noiseMicros ? '≈' : '✗';
    // Above the peer: read against the floor of a drop-in too (the peer plus what the incumbent's contract adds), when the framework has one.
    const floor = mark === '✓' ? undefined : fw.rows.find((f) => f.dropInFloor === true && f.scenario === r.scenario && f.delta !== undefined);
    const floorNote = floor === undefined ? '' : `; ${floor.limiter} ${formatSigned(floor.delta.median)}, paired ours − it ${formatSigned(pairedDelta(r, floor).median)}`;
    lines.push(
      `${mark} ${name}, ${r.limiter}, ${r.scenario}: Δ ${formatSigned(r.delta.median)} µs/req against ${cheapest.limiter} ${formatSigned(cheapest.delta.median)}; ` +
        `paired ours − peer ${formatSigned(paired.median)} [${formatSigned(paired.min, 0)}…${formatSigned(paired.max, 0)}] against noise ${fw.noiseMicros.toFixed(1)}${floorNote}`,
    );
  }
  return lines;
}

/** Each of our rows against its twin on the --against ref. */
function againstRef(name, fw, byId, against) {
  if (against === undefined) return [];
  const lines = [];
  for (const r of fw.rows) {
    const twin = r.ours && r.delta !== undefined ? byId.get(twinOf(r.id)) : undefined;
    if (twin === undefined || twin.delta === undefined || !isTwin(twin.id)) continue;
    const paired = pairedDelta(r, twin);
    const mark = paired.median <= fw.noiseMicros ? '✓' : '✗';
    lines.push(
      `${mark} ${name}, ${r.limiter}, ${r.scenario}: ${(r.ratio.median / twin.ratio.median).toFixed(3)}× ${against.short}'s req/s ratio; ` +
        `Δ ${formatSigned(r.delta.median)} against ${formatSigned(twin.delta.median)} µs/req, paired ours − it ${formatSigned(paired.median)} [${formatSigned(paired.min, 0)}…${formatSigned(paired.max, 0)}] against noise ${fw.noiseMicros.toFixed(1)}`,
    );
  }
  return lines;
}

/** Row `a`'s Δ µs/req minus row `b`'s, per round (each against its own bare slices), summarised over rounds. */
function pairedDelta(a, b) {
  return summary(a.delta.values.map((v, i) => v - b.delta.values[i]).filter(Number.isFinite));
}

function fmtSeconds(ms) {
  return ms % 1_000 === 0 ? `${ms / 1_000} s` : `${(ms / 1_000).toFixed(1)} s`;
}
