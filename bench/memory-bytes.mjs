// Part "bytes": memory per tracked key, bench/notes/method.md §3.
//
// One fresh process per contender (node --expose-gc). Memory is
// heapUsed + arrayBuffers after full GCs: lru-cache preallocates its index
// arrays as typed arrays sized to `maxKeys`, outside the JS heap, and they are
// counted. The "before" snapshot is taken before the store is created, so the
// preallocation is part of the figure; the empty store is measured as well to
// show how much of it that is. Keys are IPv4-like strings made on the fly, so
// the key string the store retains is part of its cost, as in the baseline.

import { fileURLToPath } from 'node:url';
import { serveParent, startChild } from './lib/child.mjs';
import { mapBaseline } from './lib/baseline.mjs';
import { loadCore } from './lib/core.mjs';
import { formatBytes, renderTable } from './lib/format.mjs';
import { ipv4Key } from './lib/keys.mjs';
import { buildLimiter, LIMITER_CALL, limiterDefinitions } from './lib/limiters.mjs';
import { DROP_INS, PEERS } from './lib/peers.mjs';

/** The issue's target: total bytes per key at most this many times the baseline's. */
export const TARGET = { max: 2.5 };
/** Issue 9's target, for every single-limit algorithm (a policy holds one state per limit). */
export const SINGLE_LIMIT_TARGET = { max: 2.0 };

const BASELINE = 'baseline';
const HOUR_MS = 3_600_000;

/** Each key is hit once, so every window is 1 h here (the sliding log keeps one entry per key). */
const CONTENDERS = [
  { id: BASELINE, label: 'baseline', what: 'Map<string,number> get/set + Date.now()', state: 'number', reference: true },
  ...limiterDefinitions({ slidingLogWindowMs: HOUR_MS }).map((d) => ({ id: d.id, label: `ratekit ${d.label}`, what: LIMITER_CALL, state: d.state, definition: d })),
  ...PEERS.map((p) => ({ id: p.id, label: p.label, what: p.what, state: p.state, peer: p })),
  ...DROP_INS.map((p) => ({ id: p.id, label: p.label, what: p.what, state: p.state, peer: p })),
];

/** Several full collections, so what is left is what is reachable. */
function settle() {
  for (let i = 0; i < 3; i++) globalThis.gc();
}

function snapshot() {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, offHeap: m.arrayBuffers, rss: m.rss };
}

/** Keeps the filled store reachable until the last snapshot is taken. */
// eslint-disable-next-line no-unused-vars -- written, never read: holding the reference is its whole job
let retained;

/** Child side: fills one contender with `count` distinct keys and measures it. */
async function measure(id, count) {
  const contender = CONTENDERS.find((c) => c.id === id);
  if (contender === undefined) throw new Error(`unknown contender ${id}`);
  // Load the code first: module code and its constants are not per-key cost.
  const core = contender.reference || contender.peer !== undefined ? undefined : await loadCore();
  settle();
  const before = snapshot();
  let decide;
  let size;
  if (contender.reference) {
    const baseline = mapBaseline();
    const map = baseline.map;
    decide = baseline.decide;
    size = () => map.size;
    retained = map;
  } else if (contender.peer !== undefined) {
    const built = contender.peer.build(count);
    decide = built.decide;
    size = built.size;
    retained = built;
  } else {
    const { limiter, store } = buildLimiter(core, contender.definition, count);
    decide = (key) => limiter.consume(key).allowed;
    size = () => store.size;
    retained = limiter;
  }
  settle();
  const empty = snapshot();
  let refused = 0;
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    let admitted = decide(ipv4Key(i + 1));
    // The async incumbents: awaited one by one, as their middleware does.
    if (admitted instanceof Promise) admitted = await admitted;
    if (!admitted) refused++;
  }
  const fillMs = performance.now() - start;
  settle();
  const after = snapshot();
  const held = size();
  const problems = [];
  if (held !== count) problems.push(`holds ${held} keys, expected ${count}`);
  if (refused > 0) problems.push(`${refused} decisions refused`);
  return {
    type: 'measured',
    keys: count,
    held,
    fillMs,
    sanity: problems.length === 0 ? 'ok' : problems.join('; '),
    bytesPerKey: {
      heap: (after.heap - before.heap) / count,
      offHeap: (after.offHeap - before.offHeap) / count,
      total: (after.heap + after.offHeap - before.heap - before.offHeap) / count,
      rss: (after.rss - before.rss) / count,
      emptyStore: (empty.heap + empty.offHeap - before.heap - before.offHeap) / count,
    },
  };
}

/** Parent side: one fresh process per contender, one after the other. */
export async function run(options, log) {
  const chosen = CONTENDERS.filter((c) => c.reference || options.variants === undefined || options.variants.includes(c.id));
  const self = fileURLToPath(import.meta.url);
  const measured = {};
  for (const c of chosen) {
    log(`bytes: ${c.id}, ${options.memoryKeys} keys`);
    const child = startChild(self, { args: ['--child'], execArgv: ['--expose-gc'], label: `bytes ${c.id}` });
    try {
      const { type, ...figures } = await child.request({ cmd: 'measure', id: c.id, keys: options.memoryKeys });
      measured[c.id] = figures;
    } finally {
      await child.close();
    }
  }
  const base = measured[BASELINE].bytesPerKey.total;
  for (const c of chosen) {
    const m = measured[c.id];
    m.ratio = m.bytesPerKey.total / base;
    m.target = c.reference || c.peer !== undefined ? undefined : { ...TARGET, pass: m.ratio > 0 && m.ratio <= TARGET.max };
    const single = m.target !== undefined && !Array.isArray(c.definition.limits);
    m.singleLimitTarget = single ? { ...SINGLE_LIMIT_TARGET, pass: m.ratio > 0 && m.ratio <= SINGLE_LIMIT_TARGET.max } : undefined;
  }
  return {
    config: { keys: options.memoryKeys, maxKeys: options.memoryKeys, target: TARGET },
    contenders: chosen.map(({ id, label, what, state, reference, definition, peer }) => ({
      id,
      label,
      what,
      state,
      reference: reference === true,
      peer: peer !== undefined,
      limits: definition?.limits,
    })),
    results: measured,
  };
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { config } = results;
  const rows = results.contenders.map((c) => {
    const m = results.results[c.id];
    const b = m.bytesPerKey;
    return [
      c.reference ? `**${c.label}**` : c.label,
      c.state,
      formatBytes(b.heap),
      formatBytes(b.offHeap),
      formatBytes(b.total),
      formatBytes(b.emptyStore),
      `${m.ratio.toFixed(3)}×`,
      m.target === undefined ? '' : m.target.pass ? '✓' : '✗',
      m.singleLimitTarget === undefined ? '' : m.singleLimitTarget.pass ? '✓' : '✗',
      formatBytes(b.rss),
      `${m.held}${m.sanity === 'ok' ? ' ✓' : ` ✗ ${m.sanity}`}`,
      `${(m.fillMs / 1_000).toFixed(2)} s`,
    ];
  });
  const table = renderTable(
    [
      { title: 'contender' },
      { title: 'state per key' },
      { title: 'heap B/key', align: 'right' },
      { title: 'off-heap B/key', align: 'right' },
      { title: 'total B/key', align: 'right' },
      { title: 'of which empty store', align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: `≤${config.target.max}×` },
      { title: `single limit ≤${SINGLE_LIMIT_TARGET.max}×` },
      { title: 'RSS B/key', align: 'right' },
      { title: 'keys held', align: 'right' },
      { title: 'fill time', align: 'right' },
    ],
    rows,
  );
  const intro = [
    `## Memory per tracked key (${config.keys.toLocaleString('en-US')} distinct keys)`,
    '',
    'Fresh process each (node --expose-gc). total = heapUsed + arrayBuffers after gc(), minus the same taken before the store was created ' +
      '(so lru-cache\'s preallocated typed arrays count), divided by the key count; "of which empty store" is that preallocation alone. ' +
      `Keys are IPv4-like strings (10.x.y.z) made on the fly; memoryStore({ maxKeys: ${config.maxKeys} }); every window 1 h, each key hit once. ` +
      `ratio = total B/key ÷ baseline; target (issue): ≤ ${config.target.max}×; issue 9: ≤ ${SINGLE_LIMIT_TARGET.max}× for every single limit.`,
    '',
    'The incumbents are measured the same way in the same run (each in its own process, the store created after the "before" snapshot, ' +
      'keys filled through the call their middleware makes, async ones awaited one by one). The reference run (bench/notes/method.md) measured heap only, after the empty store was made: ' +
      'baseline 65 B/key; @fastify/rate-limit 2.96×, express-rate-limit 3.33×, koa-ratelimit 3.45×, rate-limiter-flexible 6.76×.',
  ].join('\n');
  return `${intro}\n\n${table}`;
}

if (process.argv.includes('--child')) {
  serveParent(async (message) => {
    if (message.cmd !== 'measure') throw new Error(`unknown request ${JSON.stringify(message)}`);
    return measure(message.id, message.keys);
  });
}
