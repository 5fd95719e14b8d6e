// Part "layers" (opt-in: --only=layers): where a decision's time goes.
//
// The same sandwich as the decisions part, but each contender stops at one
// layer of core's in-memory path, each adding one layer to the previous:
//
//   lru       the baseline with lru-cache (a common LRU library) instead of a Map
//   step      algorithm step() on a Map: the arithmetic and its Step object
//   policy    evaluatePolicy() on a Map: + the all-or-nothing policy and buildDecision()
//   store     memoryStore().evaluate(): + the LRU and the slot bookkeeping
//   limiter   createLimiter().consume(): + option handling and the request object
//   floor     not a layer: the least any limiter that returns core's Decision
//             from lru-cache can do (lru get, the state updated in place, one
//             Decision with its one LimitDecision entry, kept reachable as an
//             adapter keeps it). The 0.7× target is out of reach if this is.
//
// The differences between adjacent rows are what each layer costs. All use
// core's public exports only, on one fixed-window limit (cheapest state).

import { LRUCache } from 'lru-cache';
import { fileURLToPath } from 'node:url';
import { mapBaseline } from './lib/baseline.mjs';
import { loadCore } from './lib/core.mjs';
import { formatPercent, formatRate, formatRatio, renderTable } from './lib/format.mjs';
import { seededRandom } from './lib/stats.mjs';
import { formatCount, runThroughputScenario } from './lib/throughput.mjs';

const BASELINE = 'baseline';
const LIMIT = { algorithm: 'fixed-window', limit: 1e12, windowMs: 3_600_000 };

const CONTENDERS = [
  { id: BASELINE, what: 'Map<string,number> get/set + Date.now()' },
  { id: 'lru', what: 'the same on lru-cache (get/set, max = keys)' },
  { id: 'step', what: "algorithms['fixed-window'].step() + Map get/set" },
  { id: 'policy', what: 'evaluatePolicy() (step + buildDecision) + Map get/set' },
  { id: 'store', what: 'memoryStore().evaluate(request)' },
  { id: 'limiter', what: 'createLimiter().consume(key)' },
  { id: 'floor', what: 'lru-cache get, state updated in place, a Decision object that escapes' },
];

/** Where the floor contender's decisions go, so that each one is really allocated (as when an adapter reads it). */
let escaped;

/** Child side (see lib/slice-worker.mjs). */
export async function prepare(id, { keys, maxKeys }) {
  const size = (n, what) => () => (n() === keys.length ? undefined : `${what} holds ${n()} keys, expected ${keys.length}`);
  if (id === BASELINE) {
    const { decide, map } = mapBaseline();
    return { mode: 'sync', decide, check: size(() => map.size, 'the map') };
  }
  const core = await loadCore();
  const limits = [core.resolveLimit(LIMIT)];
  const limit = limits[0];
  const map = new Map();
  switch (id) {
    case 'lru': {
      const cache = newLru(maxKeys);
      const decide = (key) => {
        const nowMs = Date.now();
        const used = (cache.get(key) ?? 0) + 1;
        cache.set(key, used);
        return used <= LIMIT.limit && nowMs > 0;
      };
      return { mode: 'sync', decide, check: size(() => cache.size, 'the cache') };
    }
    case 'step': {
      const algorithm = core.algorithms[limit.algorithm];
      const decide = (key) => {
        const step = algorithm.step(map.get(key), limit, 1, Date.now());
        map.set(key, step.next);
        return step.allowed;
      };
      return { mode: 'sync', decide, check: size(() => map.size, 'the map') };
    }
    case 'policy': {
      const decide = (key) => {
        const { decision, writes } = core.evaluatePolicy([map.get(key)], limits, 1, 'consume', Date.now());
        map.set(key, writes[0]);
        return decision.allowed;
      };
      return { mode: 'sync', decide, check: size(() => map.size, 'the map') };
    }
    case 'store': {
      const store = core.memoryStore({ maxKeys, pruneIntervalMs: 0 });
      const decide = (key) => store.evaluate({ key, namespace: '', limits, cost: 1, mode: 'consume', nowMs: Date.now() }).allowed;
      return { mode: 'sync', decide, check: size(() => store.size, 'the store') };
    }
    case 'limiter': {
      const store = core.memoryStore({ maxKeys, pruneIntervalMs: 0 });
      const limiter = core.createLimiter({ limits: LIMIT, store });
      return { mode: 'sync', decide: (key) => limiter.consume(key).allowed, check: size(() => store.size, 'the store') };
    }
    case 'floor': {
      const cache = newLru(maxKeys);
      const decide = (key) => {
        const nowMs = Date.now();
        let state = cache.get(key);
        if (state === undefined || nowMs >= state[0] + LIMIT.windowMs) cache.set(key, (state = [nowMs, 0]));
        const used = ++state[1];
        const remaining = LIMIT.limit - used;
        const resetMs = state[0] + LIMIT.windowMs - nowMs;
        const allowed = remaining >= 0;
        const entry = {
          name: 'limit',
          algorithm: LIMIT.algorithm,
          allowed,
          limit: LIMIT.limit,
          quota: LIMIT.limit,
          windowMs: LIMIT.windowMs,
          remaining,
          tokensBefore: remaining + 1,
          tokensRefilled: 0,
          tokensPaid: 1,
          tokensAfter: remaining,
          resetMs,
          retryAfterMs: 0,
          nextRefillMs: resetMs,
        };
        escaped = { allowed, limit: LIMIT.limit, remaining, resetMs, retryAfterMs: 0, delayMs: 0, cost: 1, nowMs, policy: 'limit', limits: [entry] };
        return escaped.allowed;
      };
      return { mode: 'sync', decide, check: size(() => cache.size, 'the cache') };
    }
    default:
      throw new Error(`unknown contender ${id}`);
  }
}

/** lru-cache, the LRU library the memory store used before its own index (stores/lru.ts), bounded at `maxKeys`. */
function newLru(maxKeys) {
  return new LRUCache({ max: maxKeys });
}

/** Parent side: both key scenarios, as in the decisions part. */
export async function run(options, log) {
  const random = seededRandom(options.seed);
  const scenarios = [
    { id: 'hot', title: '1 key', keyCount: 1 },
    { id: 'many', title: `${formatCount(options.keys)} keys`, keyCount: options.keys },
  ];
  const results = { config: { rounds: options.rounds, sliceMs: options.sliceMs, warmupMs: options.warmupMs, keys: options.keys, limit: LIMIT }, scenarios: {} };
  for (const scenario of scenarios) {
    log(`layers, ${scenario.title}: starting ${CONTENDERS.length} processes`);
    const measured = await runThroughputScenario({
      partModule: fileURLToPath(import.meta.url),
      contenders: CONTENDERS,
      baseline: BASELINE,
      scenario,
      options,
      random,
      log,
      logPrefix: 'layers',
    });
    results.scenarios[scenario.id] = { title: scenario.title, keyCount: scenario.keyCount, results: measured };
  }
  results.contenders = CONTENDERS;
  return results;
}

/** CPU ns per decision implied by a CPU-time ratio: the baseline's median CPU ns per decision ÷ ratio. */
function nanos(s, id) {
  const base = 1e9 / s.results[BASELINE].cpuRate;
  return id === BASELINE ? base : base / s.results[id].cpuRatio.median;
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { config, scenarios } = results;
  // Each layer is compared with the one it builds on ('lru' and 'step' both build on the baseline).
  const builds = { lru: BASELINE, step: BASELINE, policy: 'step', store: 'policy', limiter: 'store', floor: 'lru' };
  const cells = (s, id) => {
    const r = s.results[id];
    const own = nanos(s, id);
    const delta = builds[id] === undefined ? '' : own - nanos(s, builds[id]);
    return [
      formatRate(r.rate),
      id === BASELINE ? '1 (ref)' : formatRatio(r.ratio),
      formatPercent(r.spread),
      id === BASELINE ? '1 (ref)' : formatRatio(r.cpuRatio),
      own.toFixed(0),
      delta === '' ? '' : `${delta >= 0 ? '+' : ''}${delta.toFixed(0)}`,
    ];
  };
  const rows = results.contenders.map((c) => [
    c.id === BASELINE ? '**baseline**' : c.id,
    c.what,
    scenarios.hot.results[c.id].sanity === 'ok' && scenarios.many.results[c.id].sanity === 'ok' ? 'ok' : `${scenarios.hot.results[c.id].sanity}; ${scenarios.many.results[c.id].sanity}`,
    ...cells(scenarios.hot, c.id),
    ...cells(scenarios.many, c.id),
  ]);
  const many = scenarios.many.title;
  const table = renderTable(
    [
      { title: 'layer' },
      { title: 'what is measured' },
      { title: 'sanity' },
      { title: '1 key: ops/s', align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: 'CPU-time ratio', align: 'right' },
      { title: 'CPU ns/op', align: 'right' },
      { title: 'Δ ns', align: 'right' },
      { title: `${many}: ops/s`, align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: 'CPU-time ratio', align: 'right' },
      { title: 'CPU ns/op', align: 'right' },
      { title: 'Δ ns', align: 'right' },
    ],
    rows,
  );
  const intro = [
    '## Where a decision goes: core layers, one fixed-window limit',
    '',
    `Same method as the decisions part (${config.rounds} rounds of ${config.sliceMs} ms). CPU-time ratio: the ratio on decisions per second of ` +
      "the process's own CPU time. CPU ns/op = the baseline's median CPU ns per decision ÷ the CPU-time ratio, so it inherits the ratio's steadiness; " +
      'Δ ns = the layer minus the one it builds on (lru and step: the baseline; policy: step; store: policy; limiter: store; floor: lru).',
  ].join('\n');
  return `${intro}\n\n${table}`;
}
