#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from `node bench/run.mjs --cpu-prof=<dir>`):
// self and total time per function, highest first.
//
//   node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25]

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [file, topText = '25'] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Sample counts per node, weighted by the time delta to the next sample.
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
}
const label = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${basename(f.url)}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
const self = new Map();
const total = new Map();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  self.set(label(node), (self.get(label(node)) ?? 0) + us);
  // Total: every distinct function on the stack gets the sample once.
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at));
    if (seen.has(name)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + us);
  }
}
// Idle time is other processes' turn (one child works at a time): leave it out.
const idle = self.get('(idle)') ?? 0;
self.delete('(idle)');
const all = [...selfUs.values()].reduce((a, b) => a + b, 0) - idle;
const top = Number(topText);
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
process.stdout.write(`${basename(file)}: ${(all / 1e3).toFixed(0)} ms busy (idle left out)\n  self%  total%  function\n`);
for (const [name, us] of rows) {
  process.stdout.write(`${((us / all) * 100).toFixed(1).padStart(6)} ${(((total.get(name) ?? 0) / all) * 100).toFixed(1).padStart(6)}  ${name}\n`);
}
