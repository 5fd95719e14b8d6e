#!/usr/bin/env node
// Runs express-rate-limit's own library tests, unchanged, against @ratekit/express's build.
//
//   node packages/express/upstream/run.mjs [--control] [--keep] [test-file-filter]
//
// --control runs the same files against the real express-rate-limit (the devDependency) instead, to
// show what it scores on them in the same setup.
//
// The tests are those of express-rate-limit's tag v8.6.2 (TAG below), and that is checked: the run
// fails unless .upstream/package.json, taken from the same tag, says that version, and the files of
// .upstream/test/library hash to the tag's (TAG_TESTS_SHA256). We imitate 8.7.4 (the devDependency,
// the control), but the repository the `fetch` tool gives (its newest snapshot) holds no tag after
// v8.6.2, and its main is v8.6.2 plus commits that leave test/library as it is. Only a tag pins what
// differences.json is true for: when a v8.7.x tag can be fetched, move TAG and TAG_TESTS_SHA256 to it
// and make differences.json true for its files.
//
// express-rate-limit does not publish its tests (they are not in the npm tarball). Take `package.json`
// and `test/library/` of TAG from its repository into packages/express/.upstream/ (git-ignored: never
// commit them), e.g. with the `fetch` tool (github:express-rate-limit/express-rate-limit, which gives a
// bare repository under /work/.mirror/) or a clone of github.com/express-rate-limit/express-rate-limit:
//   mkdir -p packages/express/.upstream
//   git --git-dir=<the repository's .git> archive v8.6.2 package.json test/library | tar -x -C packages/express/.upstream
// Without the test files this script prints one line and exits 0, so CI without them is not held up.
//
// 1. The test files import `../../source/<module>.js`. A generated jest config maps each to ours:
//    `index` to packages/express/dist/index.cjs (build first), `memory-store` to its MemoryStore, and
//    the internal modules the files reach into to the compat module that imitates each one:
//    `validations` → src/compat/validations.ts (getValidations), `headers` → src/compat/headers.ts
//    (setLegacyHeaders, setDraft6/7/8Headers, setRetryAfterHeader), `console-logger` →
//    src/compat/console-logger.ts (ConsoleLogger). With --control every one maps to the real package's
//    bundle, whose internals are exposed by evaluating it with a line that exports them.
// 2. types-test.ts reads `../../dist/index.d.ts` (.upstream/dist/index.d.ts), and skips itself where
//    that is missing unless CI is set. So that it runs the same everywhere, the subject's type bundle
//    is copied there first: packages/express/dist/index.d.ts (--control: express-rate-limit's).
// 3. jest runs every file in one process (-w 1), with @swc/jest as the repository's own config does,
//    by scripts/lib/upstream-jest.mjs (shared with the other runners of jest suites).
// 4. Prints the counts and every failing test; exits 1 when a test fails that differences.json does not
//    list (each entry names its deliberate difference in docs/migrating/express-rate-limit.md), or when
//    a listed test passes (the list must stay true). The control run only reports.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../../../scripts/lib/throwaway-redis.mjs';
import { reportAgainst, resolveAnywhere, runJest, shim as writeShim, swcTransform } from '../../../scripts/lib/upstream-jest.mjs';

/** The release whose test files differences.json is true for (see above). */
const TAG = 'v8.6.2';
/** SHA-256 of TAG's test/library (filesHash below): a later commit may keep the version, not the files. */
const TAG_TESTS_SHA256 = 'd7f657e74f6c0450d702257b0961b27ac07aab2f15e466e61df4c2d21ee0bd56';
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
  console.log(`- express-rate-limit's own tests: skipped (not fetched; put package.json and test/library/ of its tag ${TAG} in ${upstreamDir})`);
  process.exit(0);
}
checkFetchedTag();

const upstreamVersion = JSON.parse(readFileSync(join(packageDir, 'node_modules', 'express-rate-limit', 'package.json'), 'utf8')).version;
const subject = control ? `express-rate-limit ${upstreamVersion}` : '@ratekit/express (dist/index.cjs)';
const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** Where each `../../source/<module>` goes. */
const targets = control ? controlTargets() : ourTargets();
copyTypes();

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
    '^@ratekit/([a-z-]+)$': join(repoDir, 'packages', '$1', 'src', 'index.ts'),
    // Our TypeScript sources import siblings as `./x.js`.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePaths: [join(packageDir, 'node_modules'), join(repoDir, 'node_modules')],
};
const results = runJest({ repoDir, work, config, testRoot: testDir, filter, keep });
reportAgainst({
  title: `express-rate-limit ${TAG}'s own tests (${testFiles.length} files) against ${subject}`,
  results,
  differences,
  control,
  filtered: filter !== undefined,
  documentedIn: 'docs/migrating/express-rate-limit.md',
});

/** The fetched files are TAG's: .upstream/package.json, taken with them, says its version. */
function checkFetchedTag() {
  const file = join(upstreamDir, 'package.json');
  const fetched = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  const how = `take package.json and test/library/ of the tag together, as this script's header says (git archive ${TAG} package.json test/library)`;
  if (fetched === undefined) fail(`${file} is missing, so the test files' version is unknown: ${how}`);
  if (fetched.name !== 'express-rate-limit' || `v${fetched.version}` !== TAG) {
    fail(`the fetched tests are ${fetched.name} ${fetched.version}, but differences.json is for express-rate-limit ${TAG}: ${how}`);
  }
  const hash = filesHash(testDir);
  if (hash !== TAG_TESTS_SHA256) fail(`${testDir} is not ${TAG}'s (its files hash to ${hash}, ${TAG}'s to ${TAG_TESTS_SHA256}): ${how}`);
}

/** SHA-256 over every file below `dir`, each as its path, a NUL, its bytes, a NUL, in path order. */
function filesHash(dir) {
  const hash = createHash('sha256');
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) =>
      relative(dir, join(entry.parentPath ?? entry.path, entry.name))
        .split(sep)
        .join('/'),
    )
    .sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(dir, file)))
      .update('\0');
  return hash.digest('hex');
}

/** The subject's type bundle where types-test.ts reads it (`../../dist/index.d.ts`). */
function copyTypes() {
  const types = control ? join(dirname(requireFromPackage.resolve('express-rate-limit')), 'index.d.ts') : join(packageDir, 'dist', 'index.d.ts');
  if (!existsSync(types)) fail(`${types} is missing: build first (pnpm --filter @ratekit/express build)`);
  mkdirSync(join(upstreamDir, 'dist'), { recursive: true });
  copyFileSync(types, join(upstreamDir, 'dist', 'index.d.ts'));
}

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
    headers: part(
      'headers.cjs',
      'module.exports = { setLegacyHeaders: i.setLegacyHeaders, setDraft6Headers: i.setDraft6Headers, setDraft7Headers: i.setDraft7Headers, setDraft8Headers: i.setDraft8Headers, setRetryAfterHeader: i.setRetryAfterHeader };\n',
    ),
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
