// Part "decisions": in-memory decision throughput, peer-bench.md §1.
//
// Sequential decisions, one contender per child process, for 1 hot key and
// for N keys (round-robin over pre-made strings). The baseline is the least a
// limiter can do: one Map.get, one Map.set and one Date.now(). Every ratio
// pairs a contender's slice with the baseline slices just before and after it.

import { fileURLToPath } from 'node:url';
import { asyncMapBaseline, mapBaseline } from './lib/baseline.mjs';
import { loadCore } from './lib/core.mjs';
import { formatPercent, formatRate, formatRatio, renderTable } from './lib/format.mjs';
import { buildLimiter, LIMITER_CALL, limiterDefinitions, SLIDING_LOG_WINDOW_MS } from './lib/limiters.mjs';
import { seededRandom } from './lib/stats.mjs';
import { formatCount, runThroughputScenario } from './lib/throughput.mjs';

/** The targets: ratio to the sync baseline, on a hot key and across 100k keys. */
export const TARGET = { min: 0.7, aim: 0.9 };

const NEVER = 1e12;
const BASELINE = 'baseline';

/** Every contender: the two baselines, then ratekit's limiters. */
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
];

/**
 * Child side (see lib/slice-worker.mjs): builds one contender over `keys`.
 * The limiter's store holds up to `maxKeys` keys.
 */
export async function prepare(id, { keys, maxKeys }) {
  const contender = CONTENDERS.find((c) => c.id === id);
  if (contender === undefined) throw new Error(`unknown contender ${id}`);
  if (contender.reference) {
    const { decide, map } = contender.mode === 'sync' ? mapBaseline() : asyncMapBaseline();
    const check = () => (map.size === keys.length ? undefined : `the map holds ${map.size} keys, expected ${keys.length}`);
    return { mode: contender.mode, decide, check };
  }
  const core = await loadCore();
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
  const chosen = CONTENDERS.filter((c) => c.reference || options.variants === undefined || options.variants.includes(c.id));
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
    });
    for (const c of chosen) {
      const r = measured[c.id];
      r.target = c.reference ? undefined : { ...TARGET, pass: r.ratio.median >= TARGET.min, aimMet: r.ratio.median >= TARGET.aim };
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
  };
  results.contenders = chosen.map(({ id, label, what, mode, reference, definition }) => ({
    id,
    label: label.replaceAll('**', ''),
    what,
    mode,
    reference: reference === true,
    limits: definition?.limits,
  }));
  return results;
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { config, scenarios } = results;
  const hot = scenarios.hot;
  const many = scenarios.many;
  const targetCell = (r) => (r.target === undefined ? '' : r.target.pass ? (r.target.aimMet ? '✓ (aim ✓)' : '✓ (aim ✗)') : '✗');
  const ratioCell = (r) => (r.ratio.median === 1 && r.ratios.length === 0 ? '1 (ref)' : formatRatio(r.ratio));
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
      cpuCell(h),
      formatRate(m.rate),
      ratioCell(m),
      formatPercent(m.spread),
      targetCell(m),
      cpuCell(m),
    ];
  });
  const target = `≥${config.target.min}× (aim ${config.target.aim}×)`;
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
      { title: 'CPU-time ratio', align: 'right' },
      { title: `${many.title}: ops/s`, align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: target },
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
      `Limit ${config.limit.toExponential()} (never reached), window 1 h (sliding log: ${config.slidingLogWindowMs} ms, see bench/README.md); memoryStore({ maxKeys: ${config.maxKeys} }). ` +
      `Target (issue): ratio ≥ ${config.target.min}× on both key counts, aim ${config.target.aim}×; ✓/✗ is judged on the median ratio. ` +
      'CPU-time ratio = the same ratio computed on decisions per second of the process\'s own CPU time (user + system): a cross-check that other processes on the machine did not skew a ratio.',
    '',
    'For scale, the same method in peer-bench.md (another run, ratios only), 1 key / 100k keys: @fastify/rate-limit 0.94× / 0.84×, ' +
      'express-rate-limit 0.46× / 0.49×, koa-ratelimit 0.16× / 0.28×, rate-limiter-flexible 0.15× / 0.20×.',
  ].join('\n');
  return `${intro}\n\n${table}`;
}

