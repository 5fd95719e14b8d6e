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

/** Name and version of the core package. */
export function coreVersions() {
  const core = JSON.parse(readFileSync(`${CORE_DIR}package.json`, 'utf8'));
  return { [core.name]: core.version };
}
