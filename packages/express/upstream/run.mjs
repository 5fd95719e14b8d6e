#!/usr/bin/env node
// Runs express-rate-limit's own library tests, unchanged, against @ratekit/express's build.
//
//   node packages/express/upstream/run.mjs [--control] [--keep] [test-file-filter]
//
// --control runs the same files against the real express-rate-limit (the devDependency) instead, to
// show what it scores on them in the same setup.
//
// express-rate-limit does not publish its tests (they are not in the npm tarball). Fetch
// `test/library/*-test.ts` and `test/library/helpers/*` from its repository (a v8.7 checkout) into
// packages/express/.upstream/test/library/ (git-ignored: never commit them). Without them this script
// prints one line and exits 0, so CI without the files is not held up.
//
// 1. The test files import `../../source/<module>.js`. A generated jest config maps each to ours:
//    `index` to packages/express/dist/index.cjs (build first), `memory-store` to its MemoryStore, and
//    the internal modules the files reach into to the compat module that imitates each one:
//    `validations` → src/compat/validations.ts (getValidations), `headers` → src/compat/headers.ts
//    (setLegacyHeaders, setDraft6/7/8Headers, setRetryAfterHeader), `console-logger` →
//    src/compat/console-logger.ts (ConsoleLogger). With --control every one maps to the real package's
//    bundle, whose internals are exposed by evaluating it with a line that exports them.
// 2. jest runs every file in one process (-w 1), with @swc/jest as the repository's own config does.
// 3. Prints the counts and every failing test; exits 1 when a test fails that differences.json does not
//    list (each entry names its deliberate difference in docs/migrating/express-rate-limit.md), or when
//    a listed test passes (the list must stay true). The control run only reports.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../../../scripts/lib/throwaway-redis.mjs';
import { reportAgainst, resolveAnywhere, runJest, shim as writeShim, swcTransform } from '../../../scripts/lib/upstream-jest.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const repoDir = dirname(dirname(packageDir));
const upstreamDir = join(packageDir, '.upstream');
const testDir = join(upstreamDir, 'test', 'library');
const work = join(upstreamDir, '.run');
const args = process.argv.slice(2);
const control = args.includes('--control');
const keep = args.includes('--keep');
const filter = args.find((a) => !a.startsWith('--'));
const requireHere = createRequire(import.meta.url);
const requireFromPackage = createRequire(join(packageDir, 'package.json'));

const testFiles = existsSync(testDir) ? readdirSync(testDir).filter((f) => f.endsWith('-test.ts')) : [];
if (testFiles.length === 0) {
  console.log(`- express-rate-limit's own tests: skipped (not fetched; put its test/library/*-test.ts and helpers/ in ${testDir})`);
  process.exit(0);
}

const upstreamVersion = JSON.parse(readFileSync(join(packageDir, 'node_modules', 'express-rate-limit', 'package.json'), 'utf8')).version;
const subject = control ? `express-rate-limit ${upstreamVersion}` : '@ratekit/express (dist/index.cjs)';
const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** Where each `../../source/<module>` goes. */
const targets = control ? controlTargets() : ourTargets();

const config = {
  rootDir: upstreamDir,
  roots: [join(upstreamDir, 'test')],
  testMatch: ['**/test/library/**/*-test.ts'],
  testEnvironment: 'node',
  testTimeout: 30_000,
  transform: swcTransform(repoDir),
  moduleNameMapper: {
    ...Object.fromEntries(Object.entries(targets).map(([name, target]) => [`^\\.\\./\\.\\./source/${name}(\\.js)?$`, target])),
    '^ratelimit-header-parser$': resolveAnywhere('ratelimit-header-parser', packageDir, repoDir),
    // Newer upstream files import their test functions from vitest: jest's own, under vitest's names.
    '^vitest$': shim('vitest.cjs', 'module.exports = { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach, vi: jest };\n'),
    '^@ratekit/([a-z-]+)$': join(repoDir, 'packages', '$1', 'src', 'index.ts'),
    // Our TypeScript sources import siblings as `./x.js`.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePaths: [join(packageDir, 'node_modules'), join(repoDir, 'node_modules')],
};
const results = runJest({ repoDir, work, config, testRoot: testDir, filter, keep });
reportAgainst({
  title: `express-rate-limit's own tests (${testFiles.length} files) against ${subject}`,
  results,
  differences,
  control,
  filtered: filter !== undefined,
  documentedIn: 'docs/migrating/express-rate-limit.md',
});

/** Ours: the build for the public entry, the compat module that imitates each internal one. */
function ourTargets() {
  const dist = join(packageDir, 'dist', 'index.cjs');
  if (!existsSync(dist)) fail('packages/express/dist/index.cjs is missing: build first (pnpm --filter @ratekit/express build)');
  checkCommonJsExport(requireHere(dist));
  const compat = join(packageDir, 'src', 'compat');
  return {
    index: dist,
    'memory-store': shim('memory-store.cjs', `const m = require(${JSON.stringify(dist)});\nmodule.exports = { __esModule: true, default: m.MemoryStore, MemoryStore: m.MemoryStore };\n`),
    validations: join(compat, 'validations.ts'),
    headers: join(compat, 'headers.ts'),
    'console-logger': join(compat, 'console-logger.ts'),
    types: shim('types.cjs', 'module.exports = {};\n'),
  };
}

/** The control: the real package's bundle, evaluated once with its internals added to its exports. */
function controlTargets() {
  const bundle = requireFromPackage.resolve('express-rate-limit');
  const source = readFileSync(bundle, 'utf8');
  const internals = ['MemoryStore', 'getValidations', 'setLegacyHeaders', 'setDraft6Headers', 'setDraft7Headers', 'setDraft8Headers', 'setRetryAfterHeader', 'ConsoleLogger'];
  const wrapped = [
    `const __require = require('node:module').createRequire(${JSON.stringify(bundle)});`,
    '(function (require, module, exports) {',
    source,
    `;module.exports.__internals = { ${internals.map((n) => `${n}: typeof ${n} === 'undefined' ? undefined : ${n}`).join(', ')} };`,
    '})(__require, module, module.exports);',
  ].join('\n');
  const index = shim('express-rate-limit.cjs', wrapped);
  const part = (file, body) => shim(file, `const m = require(${JSON.stringify(index)});\nconst i = m.__internals;\n${body}`);
  return {
    index,
    'memory-store': part('memory-store.cjs', 'module.exports = { __esModule: true, default: i.MemoryStore, MemoryStore: i.MemoryStore };\n'),
    validations: part('validations.cjs', 'module.exports = { getValidations: i.getValidations };\n'),
    headers: part('headers.cjs', 'module.exports = { setLegacyHeaders: i.setLegacyHeaders, setDraft6Headers: i.setDraft6Headers, setDraft7Headers: i.setDraft7Headers, setDraft8Headers: i.setDraft8Headers, setRetryAfterHeader: i.setRetryAfterHeader };\n'),
    'console-logger': part('console-logger.cjs', 'module.exports = { ConsoleLogger: i.ConsoleLogger };\n'),
    types: shim('types.cjs', 'module.exports = {};\n'),
  };
}

function shim(file, body) {
  return writeShim(work, file, body);
}

/** As express-rate-limit's: `require()` gives `rateLimit` itself, carrying `.rateLimit`, `.default`, `.MemoryStore` and `.ipKeyGenerator`. */
function checkCommonJsExport(exported) {
  const problems = [];
  if (typeof exported !== 'function') problems.push('the export is not a function');
  if (exported.default !== exported || exported.rateLimit !== exported) problems.push('.default and .rateLimit are not the export itself');
  if (typeof exported.MemoryStore !== 'function') problems.push('.MemoryStore is missing');
  if (exported.ipKeyGenerator?.('2001:db8::1:2:3:4') !== '2001:db8::/56') problems.push('.ipKeyGenerator is missing or wrong');
  if (problems.length > 0) fail(`require('@ratekit/express'): ${problems.join('; ')}`);
}
