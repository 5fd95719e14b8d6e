#!/usr/bin/env node
// A/B of the HTTP adapters' server CPU per response, with a fixed request count per slice: repeatable
// on a shared, loaded machine where req/s is not. Not a part of `pnpm bench`; run it by hand:
//
//   BENCH_AB_OLD=$PWD/packages/koa/dist-old/index.js \
//     node bench/lib/http-ab.mjs koa 30000 5 old-compat-pass new-compat-pass rlflex-pass
//
// <framework>: express, fastify or koa (server: http-servers/ab-<framework>.mjs). Variants: `rlflex-<pass|reject>`,
// or `<new|old>-<compat|core>-<pass|reject>` (`old`: the build at $BENCH_AB_OLD, an absolute path to a copy of
// the package's dist/index.js kept inside the package, e.g. packages/koa/dist-old/, so its imports resolve).
// Every server process starts once (`--no-flush-bytecode --no-memory-reducer`, as the http part's), gets two
// warm-up slices, then each round loads bare, the variant, bare (50 connections, `requests` requests each),
// in alternating order; Δ = the variant's server CPU µs per response − the mean of the two bare slices around
// it. Prints the median Δ and [min … max] over rounds, and the load average.

import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { startServer } from './http-load.mjs';

const [fw, requestsText, roundsText, ...variants] = process.argv.slice(2);
const requests = Number(requestsText);
const rounds = Number(roundsText);
if (!['express', 'fastify', 'koa'].includes(fw) || !(requests > 0) || !(rounds > 0) || variants.length === 0) {
  console.error('usage: node bench/lib/http-ab.mjs <express|fastify|koa> <requests> <rounds> <variant>...');
  process.exit(2);
}
const script = new URL(`../http-servers/ab-${fw}.mjs`, import.meta.url).pathname;
const all = ['bare', ...variants];
const servers = new Map();
try {
  for (const v of all) servers.set(v, await startServer(script, v, { execArgv: ['--no-flush-bytecode', '--no-memory-reducer'] }));

  /** One slice of `requests` requests: the server's CPU µs per response, and the status codes seen. */
  const slice = async (v) => {
    const server = servers.get(v);
    const before = await server.usage();
    const result = await autocannon({ url: server.url, connections: 50, pipelining: 1, amount: requests });
    const micros = (await server.usage()) - before;
    if (result.errors + result.timeouts > 0) console.error(`${v}: ${result.errors} errors, ${result.timeouts} timeouts`);
    return { perResponse: micros / result.requests.total, codes: Object.keys(result.statusCodeStats ?? {}).join('/') };
  };

  for (let i = 0; i < 2; i++) for (const v of all) await slice(v);
  const deltas = new Map(variants.map((v) => [v, []]));
  const bares = [];
  for (let round = 0; round < rounds; round++) {
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      const before = await slice('bare');
      const row = await slice(v);
      const after = await slice('bare');
      const bare = (before.perResponse + after.perResponse) / 2;
      bares.push(bare);
      deltas.get(v).push(row.perResponse - bare);
      if (round === 0) console.error(`${v}: status ${row.codes}`);
    }
  }
  const median = (values) => {
    const s = [...values].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  console.log(
    `${fw}: ${requests} requests per slice, ${rounds} rounds, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(`bare: ${median(bares).toFixed(1)} µs/response`);
  for (const v of variants) {
    const d = deltas.get(v);
    console.log(`${v.padEnd(20)} Δ ${median(d).toFixed(1).padStart(6)} µs/response [${Math.min(...d).toFixed(1)} … ${Math.max(...d).toFixed(1)}]`);
  }
} finally {
  await Promise.all([...servers.values()].map((s) => s.close()));
}
