// Part "size": what installing each ratekit package set adds to an app, beside its incumbent
// (issue 31 §3, bench/notes/install-size.md). Nothing is timed; it takes about half a minute,
// most of it npm fetching the incumbents' tarballs into its cache the first time.
//
// Ours are the freshly built packages (`npm pack --dry-run` in packages/<name>, after `pnpm build`);
// the incumbents are their registry tarballs at the versions bench/package.json lists. Both sides
// count their production dependencies, transitively, from the registry, and neither counts the peers
// the app already has (the framework, @nestjs/*, the Redis client, and for a store the limiter it
// plugs into): see lib/npm-footprint.mjs. Without the registry, ours are measured alone and the
// incumbents are skipped in one line.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatKilobytes, renderTable } from './lib/format.mjs';
import { createRegistry, footprint, localPackage, probeRegistry } from './lib/npm-footprint.mjs';

/** The issue's target: @ratekit/express + @ratekit/core unpacked, dependencies included, at most this many times express-rate-limit's install. */
export const TARGET = { set: 'express', max: 2.5 };

/** Each set: our packages (directories under packages/), and the incumbent package it replaces. */
const SETS = [
  { id: 'express', ours: ['express', 'core'], incumbent: 'express-rate-limit' },
  { id: 'koa', ours: ['koa', 'core'], incumbent: 'koa-ratelimit' },
  { id: 'fastify', ours: ['fastify', 'core'], incumbent: '@fastify/rate-limit' },
  { id: 'nestjs', ours: ['nestjs', 'core'], incumbent: '@nestjs/throttler' },
  // A store alone: the app has the limiter it plugs into (@ratekit/core; express-rate-limit for rate-limit-redis).
  { id: 'redis', ours: ['redis'], incumbent: 'rate-limit-redis' },
];

const PACKAGES_DIR = fileURLToPath(new URL('../packages/', import.meta.url));
const BENCH_MANIFEST = new URL('./package.json', import.meta.url);

/**
 * Measures every set (or those `--variants` names).
 * @returns `{ config, registry, sets: [{ id, ours, incumbent?, ratio?, target? }] }`, each side a footprint (bytes)
 */
export async function run(options, log) {
  const sets = SETS.filter((s) => options.variants === undefined || options.variants.includes(s.id));
  if (sets.length === 0) throw new Error(`--variants=${options.variants?.join(',')} names no size set (${SETS.map((s) => s.id).join(', ')})`);
  const registry = await probeRegistry();
  if (!registry.reachable) log(`size: the incumbents are skipped: the npm registry (${registry.registry}) is unreachable: ${registry.reason}`);
  const lookups = registry.reachable ? createRegistry() : undefined;
  const local = new Map();
  const ours = (dir) => {
    if (!local.has(dir))
      local.set(
        dir,
        localPackage(`${PACKAGES_DIR}${dir}`).then((p) => ({ ...p, dir })),
      );
    return local.get(dir);
  };
  const versions = pinnedVersions();
  const results = [];
  for (const set of sets) {
    log(`size: ${set.id}: ${set.ours.map((dir) => `@ratekit/${dir}`).join(' + ')} vs ${set.incumbent}`);
    const oursFootprint = await footprint(await Promise.all(set.ours.map(ours)), lookups);
    const result = { id: set.id, ours: oursFootprint };
    if (lookups !== undefined) {
      const version = versions[set.incumbent];
      if (version === undefined) throw new Error(`bench/package.json lists no ${set.incumbent}`);
      result.incumbent = await footprint([await lookups.resolve(set.incumbent, version)], lookups);
      result.ratio = {
        packed: oursFootprint.totals.packed / result.incumbent.totals.packed,
        unpacked: oursFootprint.totals.unpacked / result.incumbent.totals.unpacked,
      };
      if (set.id === TARGET.set) result.target = { ...TARGET, pass: result.ratio.unpacked <= TARGET.max };
    }
    results.push(result);
  }
  return { config: { target: TARGET, versionsFrom: 'bench/package.json' }, registry, sets: results };
}

/** The incumbents' versions: bench/package.json's devDependencies, each range's floor (`^8.7.4` → 8.7.4). */
function pinnedVersions() {
  const { devDependencies } = JSON.parse(readFileSync(BENCH_MANIFEST, 'utf8'));
  return Object.fromEntries(Object.entries(devDependencies).map(([name, range]) => [name, range.replace(/^[\^~]/, '')]));
}

/** The table of this part, as Markdown. */
export function render(results) {
  const { target } = results.config;
  const rows = results.sets.flatMap((set) => {
    const line = (label, side, ratio) => [
      label,
      side.packages
        .filter((p) => p.root)
        .map((p) => `${p.name}@${p.version}`)
        .join(' + '),
      formatKilobytes(side.totals.packed),
      formatKilobytes(side.totals.unpacked),
      String(side.totals.files),
      side.walked ? `${side.totals.dependencies}` : 'n/a',
      ratio === undefined ? '' : `${ratio.unpacked.toFixed(2)}×`,
      ratio === undefined ? '' : `${ratio.packed.toFixed(2)}×`,
      set.target === undefined || ratio === undefined ? '' : `${set.target.pass ? '✓' : '✗'} ≤ ${set.target.max}×`,
    ];
    const ours = line(`**${set.id}**: ours`, set.ours, set.ratio);
    return set.incumbent === undefined ? [ours] : [ours, line(`${set.id}: incumbent`, set.incumbent)];
  });
  const table = renderTable(
    [
      { title: 'set' },
      { title: 'packages' },
      { title: 'packed', align: 'right' },
      { title: 'unpacked', align: 'right' },
      { title: 'files', align: 'right' },
      { title: 'deps', align: 'right' },
      { title: 'unpacked ÷ incumbent', align: 'right' },
      { title: 'packed ÷ incumbent', align: 'right' },
      { title: 'target' },
    ],
    rows,
  );
  const counted = results.sets.flatMap((set) =>
    [
      ['ours', set.ours],
      ['incumbent', set.incumbent],
    ]
      .filter(([, side]) => side !== undefined)
      .map(([label, side]) => {
        const deps = side.packages.filter((p) => !p.root).map((p) => `${p.name}@${p.version} ${formatKilobytes(p.unpacked)}`);
        const peers = side.peers.length === 0 ? '' : `; peers not counted: ${side.peers.join(', ')}`;
        return `- ${set.id}, ${label}: ${side.walked ? (deps.length === 0 ? 'no dependencies' : deps.join(', ')) : 'dependencies not measured'}${peers}`;
      }),
  );
  const intro = [
    '## Install size',
    '',
    'What installing each package set adds to an app: the sum over the set and its production dependencies (transitive, from the npm registry, ' +
      'deduped by version) of `npm pack --dry-run --json`: packed = tarball bytes, unpacked = bytes on disk, files. ' +
      'Peers the app already has (the framework, @nestjs/*, a Redis client, the limiter a store plugs into) are not counted. ' +
      `Ours: the packages as built now; incumbents: the registry's tarballs at the versions ${results.config.versionsFrom} lists. ` +
      `ratio = ours ÷ incumbent; target (issue 31): @ratekit/express + @ratekit/core unpacked ≤ ${target.max}× express-rate-limit's install. kB = 1000 bytes.`,
  ].join('\n');
  const skipped = results.registry.reachable
    ? ''
    : `\n\nIncumbents skipped: the npm registry (${results.registry.registry}) is unreachable (${results.registry.reason}); ours are counted without dependencies.`;
  return `${intro}${skipped}\n\n${table}\n\nCounted besides the sets' own packages (unpacked):\n\n${counted.join('\n')}`;
}
