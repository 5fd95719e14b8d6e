// Part "decisions": in-memory decision throughput, bench/notes/method.md §1.
//
// Sequential decisions, one contender per child process, for 1 hot key and
// for N keys (round-robin over pre-made strings). The baseline is the least a
// limiter can do: one Map.get, one Map.set and one Date.now(). Every ratio
// pairs a contender's slice with the baseline slices just before and after it.

import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isTwin, twinOf, twinProcess, untwinned } from './lib/against.mjs';
import { asyncMapBaseline, mapBaseline } from './lib/baseline.mjs';
import { loadCore } from './lib/core.mjs';
import { formatPercent, formatRate, formatRatio, renderTable } from './lib/format.mjs';
import { subscribe } from 'node:diagnostics_channel';
import { buildLimiter, LIMITER_CALL, limiterDefinitions, SLIDING_LOG_WINDOW_MS } from './lib/limiters.mjs';
import { fixedWindowFloor, policyFloor } from './lib/floors.mjs';
import { DROP_INS, PEERS } from './lib/peers.mjs';
import { seededRandom } from './lib/stats.mjs';
import { formatCount, runThroughputScenario } from './lib/throughput.mjs';

/** The targets: ratio to the sync baseline, on a hot key and across 100k keys. */
export const TARGET = { min: 0.7, aim: 0.9 };

const NEVER = 1e12;
const BASELINE = 'baseline';

/** The limiter the diagnostics_channel row repeats with a subscriber attached. */
const SUBSCRIBED = 'fixed-window';

/** Every contender: the two baselines, ratekit's limiters, the same with a `ratekit:decision` subscriber, then the incumbents. */
const CONTENDERS = [
  { id: BASELINE, label: '**baseline**', what: 'Map<string,number> get/set + Date.now()', mode: 'sync', reference: true },
  { id: 'baseline-async', label: '**baseline**', what: 'same, as async function (awaited)', mode: 'async', reference: true },
  ...limiterDefinitions({ slidingLogWindowMs: SLIDING_LOG_WINDOW_MS }).map((d) => ({
    id: d.id,
    label: `ratekit ${d.label}`,
    what: LIMITER_CALL,
    mode: 'sync',
    definition: d,
  })),
  ...limiterDefinitions({ slidingLogWindowMs: SLIDING_LOG_WINDOW_MS })
    .filter((d) => d.id === SUBSCRIBED)
    .map((d) => ({
      id: `${d.id}+subscriber`,
      label: `ratekit ${d.label}, ratekit:decision subscribed`,
      what: `${LIMITER_CALL}; a no-op diagnostics_channel subscriber`,
      mode: 'sync',
      definition: d,
      subscribed: true,
    })),
  {
    id: 'floor-fixed-window',
    label: 'floor (not a limiter): the fixed-window row written inline',
    what: "bench/lib/floors.mjs: the same limit on the store's layout, returning core's Decision shape",
    mode: 'sync',
    floor: (maxKeys) => fixedWindowFloor(maxKeys, 'entry'),
  },
  {
    id: 'floor-policy',
    label: 'floor (not a limiter): the policy row written inline',
    what: "bench/lib/floors.mjs: the same two limits on the store's layout, returning core's Decision shape",
    mode: 'sync',
    floor: policyFloor,
    policy: true,
  },
  ...PEERS.map((p) => ({ id: p.id, label: p.label, what: p.what, mode: p.mode, peer: p })),
  ...DROP_INS.map((p) => ({ id: p.id, label: p.label, what: p.what, mode: p.mode, peer: p })),
];

/**
 * Child side (see lib/slice-worker.mjs): builds one contender over `keys`.
 * The limiter's store holds up to `maxKeys` keys.
 */
export async function prepare(id, { keys, maxKeys }) {
  const contender = CONTENDERS.find((c) => c.id === untwinned(id));
  if (contender === undefined) throw new Error(`unknown contender ${id}`);
  if (contender.reference) {
    const { decide, map } = contender.mode === 'sync' ? mapBaseline() : asyncMapBaseline();
    const check = () => (map.size === keys.length ? undefined : `the map holds ${map.size} keys, expected ${keys.length}`);
    return { mode: contender.mode, decide, check };
  }
  if (contender.peer !== undefined || contender.floor !== undefined) {
    const { decide, size } = contender.floor !== undefined ? contender.floor(maxKeys) : contender.peer.build(maxKeys);
    const check = () => (size() === keys.length ? undefined : `the store holds ${size()} keys, expected ${keys.length}`);
    return { mode: contender.mode, decide, check };
  }
  // A twin decides with the --against ref's built core (its process carries the worktree's path: lib/against.mjs).
  const core = isTwin(id) ? await import(pathToFileURL(join(process.env.BENCH_AGAINST_ROOT, 'packages', 'core', 'dist', 'index.js')).href) : await loadCore();
  // A subscriber is checked per decision (hasSubscribers), so attach it before the first one.
  if (contender.subscribed) subscribe('ratekit:decision', () => {});
  const { limiter, store, limitCount } = buildLimiter(core, contender.definition, maxKeys);
  const problems = [];
  const probe = limiter.consume(keys[0]);
  if (typeof probe?.then === 'function') problems.push('consume returned a Promise on the in-memory path');
  else if (probe.allowed !== true || probe.limits.length !== limitCount) problems.push(`unexpected first decision ${JSON.stringify(probe)}`);
  const check = () => {
    const found = store.size === keys.length ? problems : [...problems, `the store holds ${store.size} keys, expected ${keys.length}`];
    return found.length === 0 ? undefined : found.join('; ');
  };
  return { mode: 'sync', decide: (key) => limiter.consume(key).allowed, check };
}

/**
 * Parent side: runs both key scenarios. Progress goes to `log` (stderr).
 * @returns the figures, JSON-ready
 */
export async function run(options, log) {
  const picked = CONTENDERS.filter((c) => c.reference || options.variants === undefined || options.variants.includes(c.id));
  const { against } = options;
  // With --against, each of ratekit's rows is followed by its twin on the ref's core.
  const chosen = against === undefined ? picked : picked.flatMap((c) => (isOurs(c) ? [c, { ...c, id: twinOf(c.id), label: `${c.label} @ ${against.short}`, twin: true }] : [c]));
  const scenarios = [
    { id: 'hot', title: '1 key', keyCount: 1 },
    { id: 'many', title: `${formatCount(options.keys)} keys`, keyCount: options.keys },
  ];
  const random = seededRandom(options.seed);
  const results = { config: {}, scenarios: {} };
  for (const scenario of scenarios) {
    log(`decisions, ${scenario.title}: starting ${chosen.length} processes`);
    const measured = await runThroughputScenario({
      partModule: fileURLToPath(import.meta.url),
      contenders: chosen,
      baseline: BASELINE,
      scenario,
      options,
      random,
      log,
      logPrefix: 'decisions',
      launch: (c, execArgv) => (c.twin === true ? twinProcess(against, { execArgv }) : { execArgv }),
    });
    for (const c of chosen) {
      const r = measured[c.id];
      const ours = isOurs(c) && c.twin !== true;
      r.target = ours ? { ...TARGET, pass: r.ratio.median >= TARGET.min, aimMet: r.ratio.median >= TARGET.aim } : undefined;
      // The floor's ÷ columns say what any code on this layout and answer shape can reach.
      r.versusPeers = ours || c.floor !== undefined ? versusPeers(c, r, measured) : undefined;
    }
    results.scenarios[scenario.id] = { title: scenario.title, keyCount: scenario.keyCount, results: measured };
  }
  results.config = {
    rounds: options.rounds,
    sliceMs: options.sliceMs,
    warmupMs: options.warmupMs,
    keys: options.keys,
    maxKeys: options.keys,
    seed: options.seed,
    limit: NEVER,
    slidingLogWindowMs: SLIDING_LOG_WINDOW_MS,
    target: TARGET,
    against: against === undefined ? undefined : { ref: against.ref, short: against.short },
  };
  results.contenders = chosen.map(({ id, label, what, mode, reference, definition, peer, floor }) => ({
    id,
    label: label.replaceAll('**', ''),
    what,
    mode,
    reference: reference === true,
    peer: peer !== undefined,
    floor: floor !== undefined,
    limits: definition?.limits,
  }));
  return results;
}

/** A row of ratekit's own limiters (not a baseline, a peer or a floor). */
function isOurs(c) {
  return !c.reference && c.peer === undefined && c.floor === undefined;
}

/** Each of our rows ÷ its twin on the --against ref, per key count: the lines under the table. */
function againstRef(results) {
  const { against } = results.config;
  if (against === undefined) return '';
  const lines = [];
  for (const c of results.contenders) {
    const twinId = twinOf(c.id);
    if (!results.contenders.some((t) => t.id === twinId)) continue;
    const cell = (scenario) => {
      const ours = scenario.results[c.id];
      const twin = scenario.results[twinId];
      return `${scenario.title} ${(ours.ratio.median / twin.ratio.median).toFixed(3)}× (ratios ${ours.ratio.median.toFixed(3)} against ${twin.ratio.median.toFixed(3)})`;
    };
    lines.push(`- ${c.label}: ${cell(results.scenarios.hot)}; ${cell(results.scenarios.many)}`);
  }
  return `\n\nThis commit against ${against.ref} (${against.short}), same run (its rows: "@ ${against.short}"), each ratio vs the baseline ÷ the twin's:\n\n${lines.join('\n')}`;
}

/**
 * Issue 9's targets, on the median ratios of the same run: every single limit
 * at least express-rate-limit's MemoryStore and at least 0.85× @fastify/rate-limit's
 * LocalStore; a policy at least express-rate-limit's. Absent when those peers did not run.
 */
export const PEER_TARGET = { express: 1, fastify: 0.85 };

function versusPeers(contender, result, measured) {
  const express = measured['peer-express']?.ratio.median;
  const fastify = measured['peer-fastify']?.ratio.median;
  const policy = contender.policy === true || Array.isArray(contender.definition?.limits);
  const out = {};
  if (express !== undefined) out.express = { ratio: result.ratio.median / express, min: PEER_TARGET.express, pass: result.ratio.median >= express * PEER_TARGET.express };
  if (fastify !== undefined && !policy) out.fastify = { ratio: result.ratio.median / fastify, min: PEER_TARGET.fastify, pass: result.ratio.median >= fastify * PEER_TARGET.fastify };
  const judged = Object.values(out);
  return judged.length === 0 ? undefined : { ...out, pass: judged.every((t) => t.pass) };
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { config, scenarios } = results;
  const hot = scenarios.hot;
  const many = scenarios.many;
  const targetCell = (r) => (r.target === undefined ? '' : r.target.pass ? (r.target.aimMet ? '✓ (aim ✓)' : '✓ (aim ✗)') : '✗');
  const ratioCell = (r) => (r.ratio.median === 1 && r.ratios.length === 0 ? '1 (ref)' : formatRatio(r.ratio));
  const peerCell = (r) => {
    const v = r.versusPeers;
    if (v === undefined) return '';
    const part = (t) => (t === undefined ? '–' : `${t.ratio.toFixed(2)}×`);
    return `${part(v.express)} / ${part(v.fastify)} ${v.pass ? '✓' : '✗'}`;
  };
  const cpuCell = (r) => (r.cpuRatio === undefined ? 'n/a' : r.ratios.length === 0 ? '1 (ref)' : formatRatio(r.cpuRatio));
  const rows = results.contenders.map((c) => {
    const h = hot.results[c.id];
    const m = many.results[c.id];
    const sanity = h.sanity === 'ok' && m.sanity === 'ok' ? 'ok' : `1 key: ${h.sanity}; ${many.title}: ${m.sanity}`;
    return [
      c.reference ? `**${c.label}**` : c.label,
      c.what,
      c.mode,
      sanity,
      formatRate(h.rate),
      ratioCell(h),
      formatPercent(h.spread),
      targetCell(h),
      peerCell(h),
      cpuCell(h),
      formatRate(m.rate),
      ratioCell(m),
      formatPercent(m.spread),
      targetCell(m),
      peerCell(m),
      cpuCell(m),
    ];
  });
  const target = `≥${config.target.min}× (aim ${config.target.aim}×)`;
  const peerTitle = `÷ express-rate-limit / ÷ @fastify (≥${PEER_TARGET.express}× / ≥${PEER_TARGET.fastify}×)`;
  const table = renderTable(
    [
      { title: 'contender' },
      { title: 'what is measured' },
      { title: 'mode' },
      { title: 'sanity' },
      { title: '1 key: ops/s', align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: target },
      { title: peerTitle },
      { title: 'CPU-time ratio', align: 'right' },
      { title: `${many.title}: ops/s`, align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: target },
      { title: peerTitle },
      { title: 'CPU-time ratio', align: 'right' },
    ],
    rows,
  );
  const intro = [
    '## In-memory decision throughput (single process, sequential calls)',
    '',
    `Each contender runs in its own process, warmed up (every key touched once, then ${config.warmupMs} ms). ` +
      `${config.rounds} sandwich rounds of ${config.sliceMs} ms slices: the sync baseline is measured before and after every other contender, in a shuffled order (seed ${config.seed}). ` +
      'ops/s = median over slices; ratio = median over rounds of (contender ÷ mean of the two adjacent baseline slices), [min–max] over rounds; ' +
      "spread = (max−min)/median of the contender's own slice rates. " +
      `Limit ${config.limit.toExponential()} (never reached), window 1 h (sliding log: ${config.slidingLogWindowMs} ms, see bench/notes/decisions.md); memoryStore({ maxKeys: ${config.maxKeys} }). ` +
      `Target (issue): ratio ≥ ${config.target.min}× on both key counts, aim ${config.target.aim}×; ✓/✗ is judged on the median ratio. ` +
      "CPU-time ratio = the same ratio computed on decisions per second of the process's own CPU time (user + system): a cross-check that other processes on the machine did not skew a ratio.",
    '',
    "The incumbents run in the same schedule (their own processes, the same baseline slices): each one's store as its middleware calls it (see bench/notes/decisions.md). " +
      `Issue 9 (÷ columns): our median ratio ÷ express-rate-limit's MemoryStore (every row ≥ ${PEER_TARGET.express}×) and ÷ @fastify/rate-limit's LocalStore (single limits ≥ ${PEER_TARGET.fastify}×), same run, same key count. ` +
      "The floor rows are not limiters: the fixed-window row's limit and the policy row's two limits written inline on the memory store's layout, each returning core's `Decision` with its entries (bench/lib/floors.mjs); their ÷ columns say how far any code with this layout and answer can go. " +
      `The "${SUBSCRIBED}, ratekit:decision subscribed" row is the ${SUBSCRIBED} row with one no-op node:diagnostics_channel subscriber: what observing every decision costs; every other ratekit row runs with none.`,
  ].join('\n');
  return `${intro}\n\n${table}${againstRef(results)}`;
}
