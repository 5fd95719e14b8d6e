// The package under test: the built @ratekit/core (packages/core/dist), as
// users get it. `pnpm bench` builds it first; `node bench/run.mjs` alone
// uses whatever was built last.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CORE_DIR = fileURLToPath(new URL('../../packages/core/', import.meta.url));
const ENTRY = `${CORE_DIR}dist/index.js`;

/** Imports the built core. @throws {Error} when it has not been built. */
export async function loadCore() {
  if (!existsSync(ENTRY)) {
    throw new Error(`${ENTRY} is missing: build it first (pnpm bench does; or npx --yes pnpm@9.15.9 --filter @ratekit/core build)`);
  }
  return import(pathToFileURL(ENTRY).href);
}

/** Name and version of the core package, and of lru-cache as resolved from it. */
export function coreVersions() {
  const read = (path) => JSON.parse(readFileSync(path, 'utf8'));
  const core = read(`${CORE_DIR}package.json`);
  const versions = { [core.name]: core.version };
  try {
    versions['lru-cache'] = read(`${CORE_DIR}node_modules/lru-cache/package.json`).version;
  } catch {
    // not installed next to core (hoisted elsewhere): leave it out rather than guess
  }
  return versions;
}
