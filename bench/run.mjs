#!/usr/bin/env node
// `pnpm bench`: runs the benchmark parts and prints their tables, or with
// `--json` one JSON document on stdout (progress always goes to stderr).
// Method and how to read the figures: bench/README.md.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { prepareAgainst } from './lib/against.mjs';
import { coreVersions } from './lib/core.mjs';
import { parseOptions, PARTS, USAGE } from './lib/options.mjs';

const log = (line) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main() {
  let options;
  try {
    options = parseOptions();
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (options.from !== undefined) {
    const saved = JSON.parse(readFileSync(options.from, 'utf8'));
    process.stdout.write(options.json ? `${JSON.stringify(saved, null, 2)}\n` : await renderDocument(saved));
    return 0;
  }
  if (options.against !== undefined) options.against = prepareAgainst(options.against, log);
  const startedAt = new Date();
  const environment = describeEnvironment();
  log(`parts: ${options.parts.join(', ')}; node ${process.version}; ${environment.cpus}; load ${environment.loadAverage.join(' ')}`);
  const parts = {};
  for (const name of options.parts) {
    const part = await import(PARTS[name]);
    const started = performance.now();
    const results = await part.run(options, log);
    results.durationMs = Math.round(performance.now() - started);
    parts[name] = results;
    log(`${name}: done in ${(results.durationMs / 1_000).toFixed(1)} s`);
  }
  const document = {
    startedAt: startedAt.toISOString(),
    options: {
      quick: options.quick,
      parts: options.parts,
      variants: options.variants ?? 'all',
      rounds: options.rounds,
      sliceMs: options.sliceMs,
      warmupMs: options.warmupMs,
      keys: options.keys,
      memoryKeys: options.memoryKeys,
      seed: options.seed,
      against: options.against === undefined ? undefined : { ref: options.against.ref, sha: options.against.sha },
    },
    environment: { ...environment, loadAverageAtEnd: os.loadavg().map((n) => Number(n.toFixed(2))) },
    versions: coreVersions(),
    parts,
  };
  process.stdout.write(options.json ? `${JSON.stringify(document, null, 2)}\n` : await renderDocument(document));
  return 0;
}

/** The whole report as Markdown: each part's table, then the versions. */
async function renderDocument(document) {
  const rendered = [];
  for (const [name, results] of Object.entries(document.parts)) {
    const part = await import(PARTS[name]);
    rendered.push(`\n${part.render(results)}`);
  }
  const env = document.environment;
  const sections = [
    `# ratekit bench, ${document.startedAt.slice(0, 16).replace('T', ' ')} UTC${document.options.quick ? ' (--quick: not for comparison)' : ''}`,
    '',
    'Read the ratios, not the absolute rates: see bench/README.md.',
    ...rendered,
    '\n## Versions\n',
    `- node ${env.node} (V8 ${env.v8}), ${env.platform}`,
    `- CPU: ${env.cpus} (load average at start: ${env.loadAverage.join(' ')}, at end: ${env.loadAverageAtEnd.join(' ')})`,
    `- ${Object.entries(document.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')}`,
  ];
  return `${sections.join('\n')}\n`;
}

function describeEnvironment() {
  const cpus = os.cpus();
  const models = [...new Set(cpus.map((c) => c.model.trim()))];
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: `${models.join(', ')} × ${cpus.length}`,
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
  };
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exitCode = 1;
  },
);
