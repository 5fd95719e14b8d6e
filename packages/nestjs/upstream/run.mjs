#!/usr/bin/env node
// Runs @nestjs/throttler 6.5's own tests, unchanged, against @ratekit/nestjs's build.
//
//   node packages/nestjs/upstream/run.mjs [--control] [--keep] [test-file-filter]
//
// --control runs the same files against the real @nestjs/throttler 6.5.0 (the devDependency's
// dist/), to show what it scores on them on this machine, in the same setup.
// --nest10 runs them against our build on NestJS 10 (@nestjs/common, core, testing, platform-express
// and platform-fastify ^10, installed with npm into .upstream/.nest10 the first time; the build and
// @ratekit/core's are copied beside them, and the spec files into .upstream/.nest10/suite, so that
// every import resolves to NestJS 10).
// --ratekit-mode runs them against our build with `policy: 'all-or-nothing'` added to every
// `ThrottlerModule.forRoot()` (the ratekit mode), to show which upstream tests that mode changes.
// Like --control it only reports.
//
// @nestjs/throttler does not publish its tests (they are not in the npm tarball). Put a v6.5.x
// checkout's `src/throttler.guard.spec.ts`, `src/throttler.service.spec.ts` and `test/` (the e2e
// specs: controller, custom-error-message, function-overrides, multi-throttler, each on Express and
// Fastify, with their apps) in packages/nestjs/.upstream/ (git-ignored: never commit them). Without
// them this script prints one line and exits 0.
//
// 1. Only the imports of upstream's sources are redirected, by a generated jest config: `../src`,
//    `../../src` and `../../../src` (the e2e specs and their apps) to packages/nestjs/dist/index.cjs
//    (build first); `../src/throttler.constants` and the unit specs' `./throttler.<module>` to small
//    shims re-exporting the same names from that build (`THROTTLER_OPTIONS`, `ThrottlerGuard`,
//    `ThrottlerStorage`, `ThrottlerStorageService`, `ThrottlerException`; the two interface files
//    hold only types).
// 2. jest 29 (upstream's own major: jest 30 dropped `toThrowError` and `toBeCalledTimes`, which the
//    specs use), @swc/jest with legacy decorators and decorator metadata (upstream's ts-jest emits
//    both), every file in one process (-w 1), by scripts/lib/upstream-jest.mjs (shared with the
//    express runners).
// 3. Prints the counts and every failing test; exits 1 when a test fails that differences.json does
//    not list (each entry gives the reason, see docs/migrating/nestjs-throttler.md), or when a listed
//    test passes (the list must stay true), unless its entry says `mayPass` (a failure that depends
//    on the machine, not on us: it fails on @nestjs/throttler itself here, see --control).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../../../scripts/lib/throwaway-redis.mjs';
import { reportAgainst, runJest, shim as writeShim } from '../../../scripts/lib/upstream-jest.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const repoDir = dirname(dirname(packageDir));
const upstreamDir = join(packageDir, '.upstream');
const work = join(upstreamDir, '.run');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const control = args.includes('--control');
const ratekitMode = args.includes('--ratekit-mode');
const nest10 = args.includes('--nest10');
const filter = args.find((a) => !a.startsWith('--'));
const requireHere = createRequire(join(packageDir, 'package.json'));

const UNIT_SPECS = ['src/throttler.guard.spec.ts', 'src/throttler.service.spec.ts'];
const testDir = join(upstreamDir, 'test');
const e2eSpecs = existsSync(testDir) ? findSpecs(testDir, '.e2e-spec.ts').map((f) => f.slice(upstreamDir.length + 1)) : [];
const unitSpecs = UNIT_SPECS.filter((f) => existsSync(join(upstreamDir, f)));
const specs = [...unitSpecs, ...e2eSpecs];
if (specs.length === 0) {
  console.log(`- @nestjs/throttler's own tests: skipped (not fetched; put a v6.5.x checkout's src/*.spec.ts and test/ in ${upstreamDir})`);
  process.exit(0);
}

const upstreamDist = dirname(requireHere.resolve('@nestjs/throttler'));
const upstreamVersion = JSON.parse(readFileSync(join(upstreamDist, '..', 'package.json'), 'utf8')).version;
if (!control && !existsSync(join(packageDir, 'dist', 'index.cjs'))) fail('packages/nestjs/dist/index.cjs is missing: build first (pnpm --filter @ratekit/nestjs build)');
/** Where the spec files run from, and where their imports resolve. */
const { suiteDir, nodeModules } = nest10 ? prepareNest10() : { suiteDir: upstreamDir, nodeModules: [join(packageDir, 'node_modules'), join(repoDir, 'node_modules')] };
const dist = control ? join(upstreamDist, 'index.js') : nest10 ? join(suiteDir, '..', 'node_modules', '@ratekit', 'nestjs', 'dist', 'index.cjs') : join(packageDir, 'dist', 'index.cjs');
const subject = control
  ? `@nestjs/throttler ${upstreamVersion} (the control)`
  : ratekitMode
    ? "@ratekit/nestjs (dist/index.cjs) in the ratekit mode (policy: 'all-or-nothing')"
    : nest10
      ? `@ratekit/nestjs (dist/index.cjs) on NestJS ${nest10Version()}`
      : '@ratekit/nestjs (dist/index.cjs)';
const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const d = JSON.stringify(dist);
const constants = control ? join(upstreamDist, 'throttler.constants.js') : shim('constants.cjs', `const m = require(${d});\nmodule.exports = { THROTTLER_OPTIONS: m.getOptionsToken() };\n`);
/** The unit specs' `./throttler<module>` imports, each to the same names from our build (or upstream's own module). */
const siblings = control
  ? Object.fromEntries(
      [
        'throttler.guard',
        'throttler.service',
        'throttler-storage.interface',
        'throttler.exception',
        'throttler.constants',
        'throttler-storage-options.interface',
        'throttler-storage-record.interface',
      ].map((name) => [name, join(upstreamDist, `${name}.js`)]),
    )
  : {
      'throttler.guard': shim('guard.cjs', `const m = require(${d});\nmodule.exports = { ThrottlerGuard: m.ThrottlerGuard };\n`),
      'throttler.service': shim('service.cjs', `const m = require(${d});\nmodule.exports = { ThrottlerStorageService: m.ThrottlerStorageService };\n`),
      'throttler-storage.interface': shim('storage.cjs', `const m = require(${d});\nmodule.exports = { ThrottlerStorage: m.ThrottlerStorage };\n`),
      'throttler.exception': shim('exception.cjs', `const m = require(${d});\nmodule.exports = { ThrottlerException: m.ThrottlerException, throttlerMessage: m.throttlerMessage };\n`),
      'throttler.constants': constants,
      'throttler-storage-options.interface': shim('types.cjs', 'module.exports = {};\n'),
      'throttler-storage-record.interface': join(work, 'types.cjs'),
    };

/** --ratekit-mode: the build, its `ThrottlerModule.forRoot` adding `policy: 'all-or-nothing'`. */
const entry = ratekitMode
  ? shim(
      'ratekit-mode.cjs',
      [
        `const m = require(${d});`,
        "const forRoot = (options = []) => m.ThrottlerModule.forRoot(Array.isArray(options) ? { throttlers: options, policy: 'all-or-nothing' } : { ...options, policy: 'all-or-nothing' });",
        'module.exports = { ...m, ThrottlerModule: Object.assign(Object.create(m.ThrottlerModule), { forRoot }) };',
        '',
      ].join('\n'),
    )
  : dist;

const swc = [
  requireHere.resolve('@swc/jest', { paths: [repoDir] }),
  { jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' }, module: { type: 'commonjs' } },
];
const config = {
  rootDir: suiteDir,
  roots: [suiteDir],
  testMatch: specs.map((f) => `<rootDir>/${f}`),
  testPathIgnorePatterns: ['/node_modules/', '/\\.run/'],
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  moduleNameMapper: {
    '^(\\.\\./)+src$': entry,
    '^\\.\\./src/throttler\\.constants$': constants,
    ...Object.fromEntries(Object.entries(siblings).map(([name, target]) => [`^\\./${name.replaceAll('.', '\\.')}$`, target])),
  },
  modulePaths: nodeModules,
};
const results = runJest({
  repoDir,
  work,
  config,
  testRoot: suiteDir,
  filter,
  keep,
  jestBin: join(dirname(requireHere.resolve('jest29/package.json')), 'bin', 'jest.js'),
  extraArgs: ['--forceExit'],
  timeoutMs: 600_000,
});
reportAgainst({
  title: `@nestjs/throttler's own tests (${specs.length} files) against ${subject}`,
  results,
  differences,
  control: control || ratekitMode,
  filtered: filter !== undefined,
  documentedIn: 'docs/migrating/nestjs-throttler.md',
  differencesFile: 'differences.json',
});

/** NestJS 10 in .upstream/.nest10, with copies of our build and the spec files beside it. */
function prepareNest10() {
  const dir = join(upstreamDir, '.nest10');
  mkdirSync(dir, { recursive: true });
  if (nest10Version(dir) === undefined) {
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'nest10-suite', private: true })}\n`);
    const packages = ['common', 'core', 'testing', 'platform-express', 'platform-fastify'].map((name) => `@nestjs/${name}@^10`);
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...packages, 'reflect-metadata@^0.2.2', 'rxjs@^7.8.0', 'pactum@^3.8.0', 'ipaddr.js@^2.2.0'], {
      cwd: dir,
      stdio: 'inherit',
    });
    if (install.status !== 0 || nest10Version(dir) === undefined) fail('could not install NestJS 10 into packages/nestjs/.upstream/.nest10');
  }
  for (const name of ['nestjs', 'core']) {
    const target = join(dir, 'node_modules', '@ratekit', name);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    const source = join(repoDir, 'packages', name);
    if (!existsSync(join(source, 'dist'))) fail(`packages/${name}/dist is missing: build first`);
    cpSync(join(source, 'dist'), join(target, 'dist'), { recursive: true });
    cpSync(join(source, 'package.json'), join(target, 'package.json'));
  }
  const suite = join(dir, 'suite');
  rmSync(suite, { recursive: true, force: true });
  for (const part of ['src', 'test']) if (existsSync(join(upstreamDir, part))) cpSync(join(upstreamDir, part), join(suite, part), { recursive: true });
  return { suiteDir: suite, nodeModules: [join(dir, 'node_modules')] };
}

/** The version of @nestjs/core in .upstream/.nest10 when it is a 10.x, else undefined. */
function nest10Version(dir = join(upstreamDir, '.nest10')) {
  const file = join(dir, 'node_modules', '@nestjs', 'core', 'package.json');
  const version = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined;
  return version?.startsWith('10.') ? version : undefined;
}

function shim(file, body) {
  return writeShim(work, file, body);
}

function findSpecs(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : findSpecs(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}
