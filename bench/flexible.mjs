// Part "flexible": @ratekit/flexible against rate-limiter-flexible, the code the same but for the
// import (issue 32). It runs the rows of four other parts with only these two contenders (and their
// baselines), in one run, and puts them side by side:
//
// - in-memory decisions per second, 1 key and --keys keys (part "decisions": RateLimiterMemory.consume);
// - bytes per key at --memory-keys keys (part "bytes");
// - Redis, 50 decisions in flight on one connection, node-redis and ioredis, 1 key and --keys keys:
//   decisions per second, Redis CPU and commands per decision (part "store": RateLimiterRedis.consume);
// - HTTP on Express, the wiki's minimal middleware, pass and reject: server CPU per response over the
//   bare server (part "http").
//
// Targets (issue 32): at least rate-limiter-flexible on every row, and at most half its bytes per key.

import { renderTable } from './lib/format.mjs';
import { median } from './lib/stats.mjs';

export const TARGET = { atLeast: 1, bytesAtMost: 0.5 };

const PARTS = {
  decisions: { module: './memory-decisions.mjs', variants: ['peer-flexible', 'dropin-flexible'] },
  bytes: { module: './memory-bytes.mjs', variants: ['peer-flexible', 'dropin-flexible'] },
  store: { module: './store.mjs', variants: ['node-redis', 'ioredis', 'rlf', 'flexible'] },
  http: { module: './http.mjs', variants: ['express/rlflex-pass', 'express/rlflex-reject', 'express/flexible-pass', 'express/flexible-reject'] },
};

/** Runs each part with only rlf and the drop-in; returns every part's own results, and the comparison rows. */
export async function run(options, log) {
  const parts = {};
  for (const [name, { module, variants }] of Object.entries(PARTS)) {
    log(`flexible: part ${name}, ${variants.join(', ')}`);
    const part = await import(module);
    parts[name] = await part.run({ ...options, variants }, log);
  }
  return { parts, rows: compare(parts), target: TARGET };
}

/** One row per figure: rlf's, ours, ours ÷ rlf (or ours − rlf), and whether the target is met. */
export function compare(parts) {
  const rows = [];
  const push = (what, rlf, ours, { unit = '', higherIsBetter = true, bound = TARGET.atLeast } = {}) => {
    const ratio = ours / rlf;
    const met = higherIsBetter ? ratio >= bound : ratio <= bound;
    rows.push({ what, rlf, ours, unit, ratio, bound, higherIsBetter, met });
  };
  for (const scenario of Object.values(parts.decisions.scenarios ?? {})) {
    const r = scenario.results;
    push(`in memory, decisions/s ÷ baseline, ${scenario.title}`, r['peer-flexible'].ratio.median, r['dropin-flexible'].ratio.median, { unit: '×' });
  }
  const b = parts.bytes.results;
  if (b !== undefined) push('in memory, bytes per key', b['peer-flexible'].bytesPerKey.total, b['dropin-flexible'].bytesPerKey.total, { unit: 'B', higherIsBetter: false, bound: TARGET.bytesAtMost });
  if (parts.store.skipped === undefined) {
    for (const client of ['node-redis', 'ioredis']) {
      for (const scenario of Object.values(parts.store.scenarios)) {
        const rlf = scenario.results[`${client}/rlf`];
        const ours = scenario.results[`${client}/flexible`];
        if (rlf === undefined || ours === undefined) continue;
        const at = `Redis ${client}, 50 in flight, ${scenario.title}`;
        push(`${at}: decisions/s ÷ trivial EVALSHA`, rlf.ratio.median, ours.ratio.median, { unit: '×' });
        push(`${at}: Redis CPU µs per decision`, rlf.perDecision.serverCpuUs, ours.perDecision.serverCpuUs, { unit: 'µs', higherIsBetter: false });
        push(`${at}: Redis commands per decision`, rlf.perDecision.commands, ours.perDecision.commands, { higherIsBetter: false });
      }
    }
  }
  const express = parts.http.frameworks?.express?.rows;
  if (express !== undefined) {
    const deltaOf = (id) => express.find((row) => row.id === id)?.delta;
    for (const scenario of ['pass', 'reject']) {
      const rlf = deltaOf(`rlflex-${scenario}`);
      const ours = deltaOf(`flexible-${scenario}`);
      if (rlf === undefined || ours === undefined) continue;
      // Paired per round: both rows sit in every round's sandwich.
      const n = Math.min(rlf.values.length, ours.values.length);
      const paired = median(ours.values.slice(0, n).map((v, i) => v - rlf.values[i]));
      rows.push({ what: `HTTP Express, ${scenario}: server µs per response over the bare server`, rlf: rlf.median, ours: ours.median, unit: 'µs', paired, met: paired <= 0, higherIsBetter: false });
    }
  }
  return rows;
}

/** The comparison table, then nothing else: each part's full table is in its own run. */
export function render(results) {
  const fmt = (v, unit) => (Number.isFinite(v) ? `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3)}${unit === '×' ? '×' : unit ? ` ${unit}` : ''}` : 'n/a');
  const table = renderTable(
    [{ title: 'what' }, { title: 'rate-limiter-flexible 11.4', align: 'right' }, { title: '@ratekit/flexible', align: 'right' }, { title: 'ours vs rlf (target)', align: 'right' }],
    results.rows.map((r) => [
      r.what,
      fmt(r.rlf, r.unit),
      fmt(r.ours, r.unit),
      r.paired !== undefined
        ? `${r.paired >= 0 ? '+' : ''}${r.paired.toFixed(1)} µs paired (≤ 0) ${r.met ? '✓' : '✗'}`
        : `${r.ratio.toFixed(2)}× (${r.higherIsBetter ? '≥' : '≤'} ${r.bound}×) ${r.met ? '✓' : '✗'}`,
    ]),
  );
  return [
    '## @ratekit/flexible against rate-limiter-flexible (issue 32)',
    '',
    "The same code with only the import changed: the wiki's calls on RateLimiterMemory and RateLimiterRedis, and its minimal Express middleware. In-memory and Redis rows: median over rounds of each one's ratio to its part's baseline; HTTP: Δ server CPU per response, ours − rlf paired per round.",
    '',
    table,
  ].join('\n');
}
