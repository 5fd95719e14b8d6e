// The install footprint of a set of packages, as `npm install` lays it down: each package's tarball
// (`npm pack --dry-run --json`: packed bytes, unpacked bytes, file count) and its production
// dependencies, walked transitively through the npm registry. Used by bench/install-size.mjs.
//
// - A package built here is measured in its directory (`npm pack --dry-run`, after `pnpm build`).
// - A published one is measured from its registry tarball: `npm pack <name>@<range> --dry-run --json`
//   picks the version `npm install` would (the highest that satisfies the range) and fetches it into
//   npm's cache; `npm view <name>@<version> --json` gives its manifest.
// - Walked: `dependencies` and `optionalDependencies`, never `peerDependencies` (the app has them:
//   express, koa, fastify, @nestjs/*, a Redis client); the peers met are listed, not counted. A
//   dependency met twice at the same version counts once, as npm dedupes it.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** One npm call's limit: a registry that hangs fails the part rather than the whole bench. */
const NPM_TIMEOUT_MS = 120_000;
/** npm calls at once: each is a Node process, and the bench machine has 2 cores. */
const NPM_CONCURRENCY = 3;

/**
 * Whether the registry npm is configured with answers (`npm ping`, no retries, 15 s).
 * @returns `{ registry, reachable: true }`, or `{ registry, reachable: false, reason }` with npm's first error line
 */
export async function probeRegistry() {
  const registry = (await npm(['config', 'get', 'registry'])).trim();
  try {
    await npm(['ping', '--fetch-retries=0', '--fetch-timeout=15000']);
    return { registry, reachable: true };
  } catch (error) {
    return { registry, reachable: false, reason: firstLine(error.stderr) || error.message };
  }
}

/**
 * A package built in this repository: its `npm pack --dry-run` figures and its manifest's dependencies.
 * @param dir the package's directory, with `dist/` built
 * @returns `{ name, version, packed, unpacked, files, dependencies, peers }`, bytes as npm counts them
 */
export async function localPackage(dir) {
  const [packed] = JSON.parse(await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], dir));
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return { ...figures(packed), ...requirements(manifest) };
}

/**
 * Registry look-ups, each made once per run (memoized by `name@range` and `name@version`).
 * @returns `{ resolve(name, range) }`: the package npm installs for that range, `{ name, version, packed, unpacked, files, dependencies, peers }`
 */
export function createRegistry() {
  const limit = semaphore(NPM_CONCURRENCY);
  const resolved = new Map();
  const manifests = new Map();
  const manifest = (name, version) => memo(manifests, `${name}@${version}`, async () => JSON.parse(await limit(() => npm(['view', `${name}@${version}`, '--json']))));
  const resolve = (name, range) =>
    memo(resolved, `${name}@${range}`, async () => {
      const [packed] = JSON.parse(await limit(() => npm(['pack', `${name}@${range}`, '--dry-run', '--json', '--ignore-scripts'])));
      return { ...figures(packed), ...requirements(await manifest(packed.name, packed.version)) };
    });
  return { resolve };
}

/**
 * The whole install of `roots`: the roots and every production dependency they pull in, transitively.
 * A dependency that is itself one of the roots (by name) is not walked again.
 * @param roots packages as `localPackage` or `registry.resolve` return them
 * @param registry from `createRegistry()`, or `undefined` to count the roots alone (no registry)
 * @returns `{ packages: [{ name, version, packed, unpacked, files, root }], totals: { packed, unpacked, files, dependencies }, peers, walked }`
 *   (bytes; `dependencies` counts the packages that are not roots; `peers`: the peer names met that are not roots; `walked`: false without a registry)
 */
export async function footprint(roots, registry) {
  const rootNames = new Set(roots.map((p) => p.name));
  const counted = new Map(roots.map((p) => [`${p.name}@${p.version}`, { ...p, root: true }]));
  if (registry !== undefined) {
    let frontier = roots;
    while (frontier.length > 0) {
      const wanted = frontier.flatMap((p) => Object.entries(p.dependencies)).filter(([name]) => !rootNames.has(name));
      for (const [name, range] of wanted) {
        if (range.startsWith('workspace:')) throw new Error(`${name}@${range}: a workspace package outside the set; add it to the set's packages`);
      }
      const found = await Promise.all(wanted.map(([name, range]) => registry.resolve(name, range)));
      frontier = [];
      for (const p of found) {
        const key = `${p.name}@${p.version}`;
        if (counted.has(key)) continue;
        counted.set(key, { ...p, root: false });
        frontier.push(p);
      }
    }
  }
  const packages = [...counted.values()];
  const sum = (field) => packages.reduce((total, p) => total + p[field], 0);
  const peers = [...new Set(packages.flatMap((p) => p.peers))].filter((name) => !rootNames.has(name)).sort();
  return {
    packages: packages.map(({ name, version, packed, unpacked, files, root }) => ({ name, version, packed, unpacked, files, root })),
    totals: { packed: sum('packed'), unpacked: sum('unpacked'), files: sum('files'), dependencies: packages.length - roots.length },
    peers,
    walked: registry !== undefined,
  };
}

/** `npm pack --json`'s entry → our field names. */
function figures(packed) {
  return { name: packed.name, version: packed.version, packed: packed.size, unpacked: packed.unpackedSize, files: packed.entryCount };
}

/** What a manifest asks to be installed with it, and the peers it expects the app to have. */
function requirements(manifest) {
  return {
    dependencies: { ...manifest.dependencies, ...manifest.optionalDependencies },
    peers: Object.keys(manifest.peerDependencies ?? {}),
  };
}

async function npm(args, cwd) {
  const { stdout } = await execFileAsync('npm', [...args, '--loglevel=error'], { cwd, timeout: NPM_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
  return stdout;
}

function memo(cache, key, make) {
  if (!cache.has(key)) cache.set(key, make());
  return cache.get(key);
}

/** `limit(task)` runs at most `n` tasks at once, the others queued in order. */
function semaphore(n) {
  let active = 0;
  const queue = [];
  const next = () => {
    if (active >= n || queue.length === 0) return;
    active++;
    const { task, resolve, reject } = queue.shift();
    task()
      .then(resolve, reject)
      .finally(() => {
        active--;
        next();
      });
  };
  return (task) =>
    new Promise((resolve, reject) => {
      queue.push({ task, resolve, reject });
      next();
    });
}

function firstLine(text) {
  return (typeof text === 'string' ? text : '').split('\n').find((line) => line.trim() !== '') ?? '';
}
