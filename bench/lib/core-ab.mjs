#!/usr/bin/env node
// By hand, not a part: core's in-memory decision path in two builds, in one run. Each build is a checkout
// whose @ratekit/core is built (`pnpm install`, `pnpm --filter @ratekit/core build`): this one, and
// `--old=<root>` (e.g. a worktree of the previous release).
//
//   node bench/lib/core-ab.mjs --old=/tmp/ab-old [--calls=300000] [--rounds=7]
//
// Variants, per build:
//   consume-1      limiter.consume(key) on the memory store, fixed window, one key (never refused)
//   consume-100k   the same over 100 000 keys, round-robin (the store holds them all)
//   pk-100k        partitionKey(key) over 100 000 keys: the draft-8 `pk` of a key not in its 1 024-key memo
// Each round runs every variant of both builds in a shuffled order, `calls` calls each after a warm-up;
// prints ns per call, median [min…max] over rounds, new ÷ old, and the load average.

import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { old: { type: 'string' }, calls: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '7' } } });
if (values.old === undefined) {
  console.error('usage: node bench/lib/core-ab.mjs --old=<root of a built checkout> [--calls=N] [--rounds=N]');
  process.exit(2);
}
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const builds = { new: here, old: resolve(values.old) };
const KEYS = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

async function variantsOf(root) {
  const core = await import(pathToFileURL(join(root, 'packages/core/dist/index.js')).href);
  const limiterOver = () => core.createLimiter({ limits: { algorithm: 'fixed-window', limit: 1e12, windowMs: 3_600_000 }, store: core.memoryStore({ maxKeys: 200_000 }) });
  const one = limiterOver();
  const many = limiterOver();
  let i = 0;
  return {
    'consume-1': () => one.consume('10.0.0.1').allowed,
    'consume-100k': () => many.consume(KEYS[(i = (i + 1) % KEYS.length)]).allowed,
    'pk-100k': () => core.partitionKey(KEYS[(i = (i + 1) % KEYS.length)]).length > 0,
  };
}

const loaded = { new: await variantsOf(builds.new), old: await variantsOf(builds.old) };
const runs = Object.entries(loaded).flatMap(([build, variants]) => Object.entries(variants).map(([name, fn]) => ({ build, name, fn, ns: [] })));
let sink = 0;
const time = (fn, n) => {
  const start = process.hrtime.bigint();
  for (let k = 0; k < n; k++) if (fn()) sink++;
  return Number(process.hrtime.bigint() - start) / n;
};
for (const run of runs) time(run.fn, calls); // warm-up
const startLoad = loadavg();
for (let round = 0; round < rounds; round++) {
  const order = runs.slice().sort(() => Math.random() - 0.5);
  for (const run of order) run.ns.push(time(run.fn, calls));
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
console.log(
  `core A/B, ${calls} calls × ${rounds} rounds; load average ${startLoad.map((x) => x.toFixed(2)).join(' ')} → ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (const name of Object.keys(loaded.new)) {
  const [n, o] = ['new', 'old'].map((b) => runs.find((r) => r.build === b && r.name === name).ns);
  const cell = (xs) => `${median(xs).toFixed(1)} ns [${Math.min(...xs).toFixed(1)}…${Math.max(...xs).toFixed(1)}]`;
  console.log(`${name.padEnd(13)} new ${cell(n)}   old ${cell(o)}   new ÷ old ${(median(n) / median(o)).toFixed(3)}`);
}
if (sink < 0) console.log(sink);
