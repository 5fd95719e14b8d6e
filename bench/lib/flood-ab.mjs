#!/usr/bin/env node
// By hand, not a part (issue 31 §2): the flood part's servers of two builds in one run, over HTTP. Each
// build is a checkout with its packages built and installed: this one, and `--old=<root>` (e.g. a copy
// of the tree at the previous commit). One private redis-server (as the flood part's), one server
// process per build and row, flooded in turn with autocannon (50 connections, one key, a fixed window of
// 10 per 1 000 ms), rows shuffled per round; prints req/s and server CPU µs per response, median
// [min…max] over rounds, each also against the bare server of the same round, and the load average.
//
//   node bench/lib/flood-ab.mjs --old=/tmp/refusal-base [--framework=express] [--ms=2000] [--rounds=5]
//
// Rows: `bare` (this build's app, no limiter), `<build> ratekit-redis` (default options: the refusal
// cache, the default headers) and `<build> ratekit-redis-noheaders` when the build's app script has it.

import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadSlice, startServer } from './http-load.mjs';
import { appEnvironment } from './redis-apps.mjs';
import { median, seededRandom, shuffled } from './stats.mjs';
import { openRedis } from './store-redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    framework: { type: 'string', default: 'express' },
    ms: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1500' },
  },
});
const framework = values.framework;
const ms = Number(values.ms);
const rounds = Number(values.rounds);
const builds = [{ name: 'new', root: resolve(here, '../..') }];
if (values.old !== undefined) builds.unshift({ name: 'old', root: resolve(values.old) });

const rows = [{ label: 'bare', root: builds.at(-1).root, limiter: 'bare' }];
for (const b of builds) {
  const script = join(b.root, `bench/http-servers/redis-${framework}.mjs`);
  if (!existsSync(script)) throw new Error(`${script} does not exist`);
  rows.push({ label: `${b.name} ratekit-redis`, root: b.root, limiter: 'ratekit-redis' });
  if (readFileSync(script, 'utf8').includes("'ratekit-redis-noheaders'")) rows.push({ label: `${b.name} ratekit-redis-noheaders`, root: b.root, limiter: 'ratekit-redis-noheaders' });
}

const redis = await openRedis();
const env = appEnvironment({ redisUrl: redis.url, limit: 10, windowMs: 1_000 });
const load = [loadavg().map((x) => x.toFixed(2))];
const servers = new Map();
try {
  for (const r of rows) {
    const script = join(r.root, `bench/http-servers/redis-${framework}.mjs`);
    servers.set(r.label, await startServer(script, r.limiter, { env, execArgv: ['--no-flush-bytecode', '--no-memory-reducer'], label: r.label }));
  }
  for (const r of rows) await loadSlice(servers.get(r.label), Number(values.warmup));
  const results = new Map(rows.map((r) => [r.label, []]));
  const random = seededRandom(31);
  for (let round = 1; round <= rounds; round++) {
    const inRound = new Map();
    for (const r of shuffled(rows, random)) {
      const s = await loadSlice(servers.get(r.label), ms);
      const bad = Object.keys(s.statusCounts).filter((c) => c !== '200' && c !== '429');
      if (bad.length > 0 || s.errors > 0) console.error(`${r.label}: status ${bad.join(',')}, ${s.errors} errors`);
      inRound.set(r.label, s);
    }
    const bare = inRound.get('bare');
    for (const [label, s] of inRound) results.get(label).push({ rate: s.rate, cpu: s.cpuMicrosPerResponse, vsBare: s.rate / bare.rate, overBare: s.cpuMicrosPerResponse - bare.cpuMicrosPerResponse });
  }
  load.push(loadavg().map((x) => x.toFixed(2)));
  const fmt = (xs, digits) => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}…${Math.max(...xs).toFixed(digits)}]`;
  console.log(`${framework}: ${rounds} rounds of ${ms} ms per row, 50 connections, one key; load average ${load[0].join(' ')} → ${load[1].join(' ')}; node ${process.version}`);
  console.log('row | req/s | req/s ÷ bare | srv CPU µs/response | over bare µs/response');
  for (const r of rows) {
    const list = results.get(r.label);
    console.log(
      `${r.label} | ${fmt(
        list.map((x) => x.rate),
        0,
      )} | ${fmt(
        list.map((x) => x.vsBare),
        3,
      )} | ${fmt(
        list.map((x) => x.cpu),
        1,
      )} | ${fmt(
        list.map((x) => x.overBare),
        1,
      )}`,
    );
  }
} finally {
  await Promise.all([...servers.values()].map((s) => s.close()));
  await redis.stop();
}
