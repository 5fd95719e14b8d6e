#!/usr/bin/env node
// Runs upstash/ratelimit-js's own bun tests (src/**/*.test.ts), unchanged, against @ratekit/upstash's build.
//
//   node packages/upstash/upstream/run.mjs [--control | --tcp] [--only <path>[,<path>…]]
//
// --control runs the same tests against the published @upstash/ratelimit 2.2.0 (a devDependency of
// packages/upstash) instead: what fails there fails on any drop-in.
// --tcp runs the same tests, unchanged, against @ratekit/upstash talking to Redis over TCP (ioredis) instead
// of HTTP: the test files' `@upstash/redis` resolves (.upstream/tsconfig.json `paths`) to upstream/tcp-redis.mjs,
// whose `Redis` is the real @upstash/redis client for the tests' own reads and writes and also carries an
// ioredis connection to the same logical database, which the Ratelimit's script runner picks (it has
// `defineCommand`). The run then checks that the decisions went over TCP: per file, the REST endpoints saw no
// EVAL/EVALSHA (they count them) and the server's own count (INFO commandstats) rose by the TCP ones. Tests that
// fail over TCP only are listed in upstream/tcp-differences.json, each with its reason.
// --only runs the named test files only (e.g. --only src/cache.test.ts), for local work; the
// listed-difference check then covers those files only.
//
// 1. The tests must be in packages/upstash/.upstream/src/ (git-ignored, never committed). Fetch them from
//    the mirrored repository:
//      mkdir -p packages/upstash/.upstream && git --git-dir=/work/.mirror/upstash+ratelimit-js/repo \
//        archive HEAD src package.json | tar -x -C packages/upstash/.upstream
//    (upstash/ratelimit-js 5b5448a, 2026-03-09, the newest commit mirrored; npm's 2.2.0 came after it.)
//    Without them this prints one line and exits 0. The runner overwrites some of those files (step 2):
//    fetch them again to read upstream's own source.
// 2. The library's own source files the tests import (./index, ./single, ./multi, ./analytics,
//    ./deny-list/*, ./hash, …) are replaced by shims re-exporting the build under test
//    (packages/upstash/dist/index.js, or @upstash/ratelimit's dist/index.mjs with --control), each name
//    mapped to the package export a user imports it as (PUBLIC below: `RegionRatelimit` from ./single is
//    the package's `Ratelimit`, `updateIpDenyList` from ./deny-list/ip-deny-list its
//    `IpDenyList.updateIpDenyList`). A name that is not in the package's public API (an internal, such as
//    `checkDenyListCache`) becomes a value that throws "… is an internal of @upstash/ratelimit …" when a
//    test uses it: those tests fail on every build and are listed in INTERNAL below. Two files are kept as
//    upstream wrote them: src/types.ts and src/constants.ts, whose values are the names of the Redis keys
//    the library reads and writes (`denyList`, `ipDenyList`, `@upstash/ratelimit`), which the tests use to
//    look at Redis and a drop-in must share. Everything else the tests import (@upstash/redis, bun:test)
//    resolves from packages/upstash's devDependencies.
// 3. The tests call Redis.fromEnv() and read the regions of upstream's workflow
//    (.github/workflows/tests.yaml): UPSTASH_REDIS_REST_URL/TOKEN and the US1_, APN_ and EU2_ ones. They
//    FLUSHDB and SCRIPT FLUSH, so they get a throwaway redis-server (scripts/lib/throwaway-redis.mjs):
//    each region is one of its logical databases (SELECT 0-3, a node-redis connection each) behind its
//    own local Upstash REST endpoint (startUpstashRestServer of @ratekit/test-utils, compiled here with
//    esbuild), which also accepts the `allow-key-locking` script flag as Upstash does.
// 4. `bun test` (the workspace's `bun` package: node_modules/.bin/bun, or RATEKIT_BUN_BIN) in
//    packages/upstash/.upstream, one process per file, JUnit results; print the counts and every failing
//    test. Exit 1 when a test fails that is not listed (INTERNAL, NEEDS_INTERNET, FAILS_ON_UPSTREAM below;
//    and, without --control, upstream/differences.json: full name -> the reason), or a listed test (in
//    differences.json, INTERNAL or FAILS_ON_UPSTREAM) runs and passes. An ON_THE_WINDOW_GRID test may pass or fail
//    on any build (where its attack falls on the windows decides). A NEEDS_INTERNET test (it downloads
//    the IP deny list from GitHub) may pass or fail: it is listed because it fails offline under --control
//    too. An error bun reports outside the tests (a describe block that throws while its tests are
//    collected: bun then runs none of that block's tests, and they are in no count) fails the run too,
//    unless differences.json lists it as `<file>: <message>`, the line printed.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fail, startThrowawayRedis } from '../../../scripts/lib/throwaway-redis.mjs';

const UPSTREAM_COMMIT = '5b5448a';
const SUITE_TIMEOUT_MS = 900_000;
/** Each test's own timeout when it sets none (bun's default is 5 s; the machine is shared). */
const TEST_TIMEOUT_MS = 30_000;
/** The regions of upstream's workflow: the variable prefix of each, and its logical database. */
const REGIONS = [
  ['', 0],
  ['US1_', 1],
  ['APN_', 2],
  ['EU2_', 3],
];
/** Files kept as upstream wrote them: the Redis key names the library and the tests share. */
const KEPT = new Set(['src/types.ts', 'src/constants.ts']);
/** The public API: per source module, each name the tests import -> the package export it is (a.b: b of export a). */
const PUBLIC = {
  'src/index.ts': { Ratelimit: 'Ratelimit', MultiRegionRatelimit: 'MultiRegionRatelimit', Analytics: 'Analytics', IpDenyList: 'IpDenyList' },
  'src/single.ts': { RegionRatelimit: 'Ratelimit' },
  'src/multi.ts': { MultiRegionRatelimit: 'MultiRegionRatelimit' },
  'src/analytics.ts': { Analytics: 'Analytics' },
  'src/deny-list/ip-deny-list.ts': { updateIpDenyList: 'IpDenyList.updateIpDenyList', disableIpDenyList: 'IpDenyList.disableIpDenyList', ThresholdError: 'IpDenyList.ThresholdError' },
};
/**
 * Files not run, and why (printed on every run): each tests only internals of @upstash/ratelimit, not in
 * its public API (package.json `exports` is its dist/index only), so no build of the package can run them.
 */
const OUT_OF_SCOPE = {
  'src/duration.test.ts': 'tests ms() of src/duration.ts, an internal; Duration parsing is reached through the limiters',
  'src/hash.test.ts': 'tests safeEval() of src/hash.ts and the SCRIPTS table, internals',
  'src/lua-scripts/hash.test.ts': "checks that the SCRIPTS table's SHA-1s match its scripts: upstream's own Lua texts, internals",
  'src/deny-list/scripts.test.ts': 'tests checkDenyListScript of src/deny-list/scripts.ts, an internal Lua script',
  'src/deny-list/time.test.ts': 'tests getIpListTTL() of src/deny-list/time.ts, an internal',
};
/** Tests in the files run that use an internal (see step 2): they fail on every build, the published one too. */
const INTERNAL = {
  'should get expected response from defaultDeniedResponse': 'calls defaultDeniedResponse (src/deny-list/deny-list.ts), an internal',
  'should resolve ratelimit and deny list response > should update ip deny list when invalidIpDenyList is true': 'calls resolveLimitPayload (src/deny-list/deny-list.ts), an internal',
  'should reject in deny list > should deny with identifier in the deny list': 'calls checkDenyListCache (src/deny-list/deny-list.ts), an internal',
  'should reject in deny list > should deny with ip in the deny list': 'calls checkDenyListCache (src/deny-list/deny-list.ts), an internal',
  'should reject in deny list > should deny with user agent in the deny list': 'calls checkDenyListCache (src/deny-list/deny-list.ts), an internal',
  'should reject in deny list > should deny with country in the deny list': 'calls checkDenyListCache (src/deny-list/deny-list.ts), an internal',
  'should reject in deny list > should deny with multiple in deny list': 'calls checkDenyListCache (src/deny-list/deny-list.ts), an internal',
  'should update ip deny list status > should return invalidIpDenyList: true when empty': 'calls checkDenyList (src/deny-list/deny-list.ts), an internal',
  'should update ip deny list status > should return invalidIpDenyList: false when disabled': 'calls checkDenyList (src/deny-list/deny-list.ts), an internal',
  'should update ip deny list status > should return invalidIpDenyList: false after updating': 'calls checkDenyList (src/deny-list/deny-list.ts), an internal',
  'should update ip deny list status > should return invalidIpDenyList: false after updating + disabling': 'calls checkDenyList (src/deny-list/deny-list.ts), an internal',
};
/** Tests that download the IP deny list from GitHub (raw.githubusercontent.com): they fail offline, the published build too. */
const NEEDS_INTERNET = {
  'should reject in deny list > should create ip denylist when enableProtection: true and not disabled': 'limit() with enableProtection downloads the IP deny list',
  'should reject in deny list > should observe that ip denylist is deleted after disabling': 'limit() with enableProtection downloads the IP deny list',
  'should reject in deny list > should intialize ip list only once when called consecutively': 'limit() with enableProtection downloads the IP deny list',
  'should reject in deny list > should block ips from ip deny list': 'limit() with enableProtection downloads the IP deny list',
  'should update ip deny list status > should handle timeout correctly': 'calls IpDenyList.updateIpDenyList, which downloads the list',
  'should update ip deny list status > should overwrite disabled status with updateIpDenyList': 'calls IpDenyList.updateIpDenyList, which downloads the list',
};
/**
 * Tests whose bound holds or not depending on where the attack falls on the windows' grid (windows are aligned to
 * the Unix epoch): they may pass or fail on any build, @upstash/ratelimit 2.2.0's too. With rate=3 and a limit of 16,
 * a fixed window admits 5 requests (15 tokens). The attack sends 32 requests 312.5 ms apart (`for r < 3.2` sends 4
 * per step, each followed by 1000 / 3.2 ms): 9.7 s, so it spans 3 windows (at most 15 pass) or, when it starts in
 * the last 2.3 s of a window (about 4 runs in 10), 4, whose two partial windows hold 6-7 requests between them:
 * 16 or 17 pass, and the test allows at most 16 (1.5 × its expected 10.67, counted for 2 windows). Seen: 17 on
 * `fixedWindow > multiRegion` over HTTP and over TCP; the same attack started 3 s into a window (a probe, Node and
 * Bun, ioredis) admits 16, as 4, 5, 5 and 2 per window: never more than 5 in one.
 */
const ON_THE_WINDOW_GRID = {
  'fixedWindow > region > 16 Limit, 80% Load, 3.2 req/s (with rate=3) > Range:  5.33 - 16 Success':
    'a 9.7 s attack on 4 s windows: 17 pass when it spans 4 windows and its partial windows hold 7 requests',
  'fixedWindow > multiRegion > 16 Limit, 80% Load, 3.2 req/s (with rate=3) > Range:  5.33 - 16 Success':
    'a 9.7 s attack on 4 s windows: 17 pass when it spans 4 windows and its partial windows hold 7 requests',
  'cachedFixedWindow > region > 16 Limit, 80% Load, 3.2 req/s (with rate=3) > Range:  5.33 - 16 Success':
    'a 9.7 s attack on 4 s windows: 17 pass when it spans 4 windows and its partial windows hold 7 requests',
};
/** The error of a download of the IP deny list (raw.githubusercontent.com) on a machine without the internet. */
const OFFLINE_ERROR = /Failed to fetch ip deny list.*(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|Unable to connect|fetch failed)/;
/** Tests that fail against the published @upstash/ratelimit 2.2.0 itself (--control), on this machine, for a reason other than the above. */
const FAILS_ON_UPSTREAM = {
  'Dynamic Limits > tokenBucket > dynamicLimits enabled, dynamic limit set (exceeds limit)':
    "written for the token bucket script before 2.2.0 (`if tokens == 0 and incrementBy > 0` rejects): a request over the limit still took tokens. 2.2.0's script rejects a request asking for more tokens than are left without taking any (`tokens < incrementBy`), so the remaining count the test expects (0) is not what 2.2.0 answers (3)",
  'Dynamic Limits > tokenBucket > with cache disabled - behavior after dynamic limit is removed':
    'the same change: under 2.2.0 the rejected rate-5 request took no tokens, so the next request succeeds where the test (written for the script before 2.2.0) expects the bucket empty',
};

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const repoRoot = dirname(dirname(packageDir));
const work = join(packageDir, '.upstream');
const require = createRequire(join(packageDir, 'package.json'));
const control = process.argv.includes('--control');
const tcp = process.argv.includes('--tcp');
if (control && tcp) fail('--control and --tcp: @upstash/ratelimit 2.2.0 takes no TCP client; run @ratekit/upstash with --tcp');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1].split(',') : undefined;
const subject = control ? '@upstash/ratelimit 2.2.0' : tcp ? '@ratekit/upstash over TCP (ioredis)' : '@ratekit/upstash';

if (!existsSync(join(work, 'src', 'ratelimit.test.ts'))) {
  console.log(`skipped: upstash/ratelimit-js's tests are not in packages/upstash/.upstream/src (fetch them from the mirror of upstash/ratelimit-js, see packages/upstash/upstream/run.mjs)`);
  process.exit(0);
}
const target = control ? join(dirname(require.resolve('@upstash/ratelimit/package.json')), 'dist', 'index.mjs') : join(packageDir, 'dist', 'index.js');
if (!existsSync(target)) fail(`${relative(repoRoot, target)} is missing: ${control ? 'install first (pnpm install)' : 'build first (pnpm --filter @ratekit/upstash build)'}`);
const bun = findBun();
if (bun === undefined) fail('no working bun (RATEKIT_BUN_BIN, node_modules/.bin/bun or PATH; it comes from the npm package `bun`, a devDependency of the workspace root)');

// The files run: every src/**/*.test.ts but OUT_OF_SCOPE's.
const allTests = listFiles(join(work, 'src'))
  .map((path) => relative(work, path).split(sep).join('/'))
  .filter((path) => path.endsWith('.test.ts'))
  .sort();
const inScope = allTests.filter((path) => OUT_OF_SCOPE[path] === undefined && (only === undefined || only.includes(path)));
if (inScope.length === 0) fail(`no test file to run${only === undefined ? '' : ` (--only ${only.join(',')})`}`);
writeShims([...inScope, 'src/test_utils.ts']);
writeTsconfig();

const differences = control ? {} : JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));
/** Tests that fail over TCP only (--tcp): full name (or `<file>: <message>`) -> the reason. */
const tcpDifferences = tcp ? JSON.parse(readFileSync(join(here, 'tcp-differences.json'), 'utf8')) : {};
for (const key of Object.keys(tcpDifferences)) if (differences[key] !== undefined) fail(`${key} is in both differences.json and tcp-differences.json`);
Object.assign(differences, tcpDifferences);
const rest = await startRegions();
const resultsFile = join(work, `results-${process.pid}.xml`);
let results;
try {
  results = await runBun(rest);
} finally {
  await rest.stop();
}

const failed = results.tests.filter((t) => t.status === 'failed');
const passed = results.tests.filter((t) => t.status === 'passed').length;
const skipped = results.tests.filter((t) => t.status === 'skipped').length;
console.log(
  `\nupstash/ratelimit-js's own tests (src/**/*.test.ts at ${UPSTREAM_COMMIT}, ${inScope.length} of ${allTests.length} files) against ${subject}: ${passed} passed, ${failed.length} failed, ${skipped} skipped, of ${results.tests.length} tests (bun test ${bun.version})${rest.note}`,
);
console.log('  not run (tests of internals):');
for (const [file, reason] of Object.entries(OUT_OF_SCOPE)) console.log(`    - ${file}: ${reason}`);
let unexpected = 0;
for (const { file, message } of results.fileErrors) {
  // Errors bun reports between tests, naming none: an internal's refusal (bun 1.4 reports some there),
  // or the IP deny list's download failing offline in the background (`pending`).
  const reason = message.includes('is an internal of @upstash/ratelimit')
    ? "an internal's refusal, which bun reported outside the test that used it"
    : OFFLINE_ERROR.test(message)
      ? 'the IP deny list downloaded in the background, offline'
      : differences[`${file}: ${message}`];
  if (reason === undefined) unexpected++;
  console.log(`  ✖ ${file}: ${message}${reason === undefined ? '   <- NOT explained' : `   (${reason})`}`);
}
const ran = (name) => results.tests.some((t) => t.fullName === name);
for (const t of failed) {
  const reason =
    (INTERNAL[t.fullName] && `on every build: ${INTERNAL[t.fullName]}`) ??
    (NEEDS_INTERNET[t.fullName] && `needs the public internet: ${NEEDS_INTERNET[t.fullName]}`) ??
    (ON_THE_WINDOW_GRID[t.fullName] && `may fail on any build, where the attack falls on the window grid: ${ON_THE_WINDOW_GRID[t.fullName]}`) ??
    (FAILS_ON_UPSTREAM[t.fullName] && `fails on @upstash/ratelimit 2.2.0 too: ${FAILS_ON_UPSTREAM[t.fullName]}`) ??
    differences[t.fullName];
  if (reason === undefined) unexpected++;
  const where = tcpDifferences[t.fullName] === undefined ? '' : 'over TCP only: ';
  console.log(`  ✖ ${t.file}: ${t.fullName}${reason === undefined ? `   <- NOT a documented difference: ${t.message}` : `   (${where}${reason})`}`);
}
// Where the scripts went: the REST endpoints count the EVAL/EVALSHA they pass on; the server counts all of them.
console.log(`  scripts run (EVAL/EVALSHA), per file: over REST (HTTP) / over TCP`);
for (const { file, rest: overRest, tcp: overTcp } of results.scripts) console.log(`    - ${file}: ${overRest} / ${overTcp}`);
const scriptTotals = results.scripts.reduce((sum, s) => ({ rest: sum.rest + s.rest, tcp: sum.tcp + s.tcp }), { rest: 0, tcp: 0 });
console.log(`  scripts run in all: ${scriptTotals.rest} over REST, ${scriptTotals.tcp} over TCP`);
if (tcp) {
  // The run proves nothing about TCP unless the decisions went there: no script over REST, and some over TCP.
  for (const { file, rest: overRest } of results.scripts.filter((s) => s.rest > 0)) {
    unexpected++;
    console.log(`  ✖ ${file}: ${overRest} script(s) went over REST in --tcp mode   <- the Ratelimit did not take the TCP client`);
  }
  if (scriptTotals.tcp === 0) {
    unexpected++;
    console.log('  ✖ no script went over TCP in --tcp mode');
  }
} else {
  // Over HTTP every script passes a REST endpoint: a TCP count here would mean the counting is wrong.
  for (const { file, tcp: overTcp } of results.scripts.filter((s) => s.tcp !== 0)) {
    unexpected++;
    console.log(`  ✖ ${file}: ${overTcp} script(s) the REST endpoints did not count, over HTTP   <- the script count is wrong`);
  }
}
// differences.json also names errors outside the tests (`<file>: <message>`, as printed above), e.g. a describe
// block that throws while its tests are collected: bun then runs none of that block's tests.
const isFileKey = (key) => /^src\/\S+\.test\.ts: /.test(key);
const mustFail = Object.fromEntries(Object.entries({ ...INTERNAL, ...FAILS_ON_UPSTREAM, ...differences }).filter(([key]) => !isFileKey(key)));
const errorKeys = new Set(results.fileErrors.map(({ file, message }) => `${file}: ${message}`));
// A listed test that did not run (its describe block threw while collected, a listed error above) is not stale.
const stale = [
  ...Object.keys(mustFail).filter((name) => ran(name) && !failed.some((t) => t.fullName === name)),
  ...Object.keys(differences).filter((key) => isFileKey(key) && (only === undefined || only.some((file) => key.startsWith(`${file}: `))) && !errorKeys.has(key)),
];
for (const name of stale) console.log(`  ! listed as failing but passed (or, an error outside the tests, not seen): ${name}`);
for (const name of Object.keys(NEEDS_INTERNET).filter((n) => ran(n) && !failed.some((t) => t.fullName === n))) console.log(`  · passed (the internet was reached): ${name}`);
console.log(`${passed} passed, ${failed.length} failed, ${skipped} skipped`);
if (unexpected > 0 || stale.length > 0) {
  console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length} stale listing(s)`);
  process.exit(1);
}
console.log(
  failed.length === 0
    ? '✔ every test passed'
    : `✔ every failure is listed: an internal, the internet, the window grid, a failure of @upstash/ratelimit 2.2.0 too${control ? '' : `, or a documented difference (packages/upstash/upstream/differences.json${tcp ? ', tcp-differences.json' : ''})`}`,
);

// ---- the shims --------------------------------------------------------------------------------------------------

/** Replaces each source module the suite's files import (but KEPT) with a shim of the build under test. */
function writeShims(suiteFiles) {
  const imported = new Map(); // module path -> Set of names
  const pattern = /import\s+(type\s+)?(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+([\w$]+))?\s*from\s*["']([^"']+)["']/g;
  for (const file of suiteFiles) {
    const text = readFileSync(join(work, file), 'utf8');
    for (const [, typeOnly, defaultName, named, namespace, specifier] of text.matchAll(pattern)) {
      if (typeOnly !== undefined || !specifier.startsWith('.')) continue;
      const module = resolveSource(dirname(file), specifier);
      if (module === undefined || KEPT.has(module) || module.endsWith('.test.ts') || module === 'src/test_utils.ts') continue;
      if (defaultName !== undefined || namespace !== undefined) fail(`${file} imports ${specifier} as a default or namespace: not shimmed (update run.mjs)`);
      const names = imported.get(module) ?? new Set();
      for (const part of (named ?? '').split(',')) {
        const name = part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0];
        if (name !== '' && !part.trim().startsWith('type ')) names.add(name);
      }
      imported.set(module, names);
    }
  }
  const helper = join(work, 'ratekit-shim.mjs');
  writeFileSync(
    helper,
    `// Written by packages/upstash/upstream/run.mjs: the library under test is ${subject}.
import * as subject from ${JSON.stringify(pathToFileURL(target).href)};

const refuse = (message) => new Proxy(function () {}, {
  get(_, property) { if (property === 'then' || typeof property === 'symbol') return undefined; throw new Error(message); },
  apply() { throw new Error(message); },
  construct() { throw new Error(message); },
});

/** The package export at \`path\` (\`IpDenyList.updateIpDenyList\`), or a value that throws saying it is missing. */
export function exported(path) {
  let value = subject;
  for (const part of path.split('.')) value = value?.[part];
  return value ?? refuse(\`${subject} does not export \${path}\`);
}

/** An internal of @upstash/ratelimit (not in its public API): a value that throws when a test uses it. */
export function internal(name, module) {
  return refuse(\`\${name} (\${module}) is an internal of @upstash/ratelimit, not in its public API: no build of the package exports it, so ${subject} is not asked for it\`);
}
`,
  );
  for (const [module, names] of imported) {
    const path = join(work, module);
    let from = relative(dirname(path), helper).split(sep).join('/');
    if (!from.startsWith('.')) from = `./${from}`;
    const lines = [...names].sort().map((name) => {
      const exportPath = PUBLIC[module]?.[name];
      return exportPath === undefined ? `export const ${name} = internal(${JSON.stringify(name)}, ${JSON.stringify(module)});` : `export const ${name} = exported(${JSON.stringify(exportPath)});`;
    });
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `// Written by packages/upstash/upstream/run.mjs: the library under test is ${subject}.\nimport { exported, internal } from ${JSON.stringify(from)};\n${lines.join('\n')}\n`);
  }
}

/**
 * .upstream/tsconfig.json, which bun reads for the test files: with --tcp its `paths` point `@upstash/redis` at
 * upstream/tcp-redis.mjs; otherwise it maps nothing (rewritten on every run, so an earlier --tcp run leaves no trace).
 */
function writeTsconfig() {
  let shim = relative(work, join(here, 'tcp-redis.mjs')).split(sep).join('/');
  if (!shim.startsWith('.')) shim = `./${shim}`;
  const paths = tcp ? { '@upstash/redis': [shim] } : {};
  writeFileSync(join(work, 'tsconfig.json'), `${JSON.stringify({ compilerOptions: { baseUrl: '.', paths } }, null, 2)}\n`);
}

/** The source file a relative import lands on (`./index`, `..`, `../types`), as a path under .upstream. */
function resolveSource(fromDir, specifier) {
  const base = join(fromDir, specifier).split(sep).join('/');
  for (const candidate of [`${base}.ts`, `${base}/index.ts`]) if (existsSync(join(work, candidate))) return candidate;
  return undefined;
}

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)]));
}

// ---- the regions: one throwaway redis-server, a logical database and a REST endpoint each -----------------------

async function startRegions() {
  const source = join(repoRoot, 'packages', 'test-utils', 'src', 'upstash-rest-server.ts');
  if (!existsSync(source)) fail(`${relative(repoRoot, source)} is missing: the tests need its Upstash REST endpoint`);
  const esbuild = createRequire(join(repoRoot, 'package.json'))('esbuild');
  const compiled = join(work, `upstash-rest-server-${process.pid}.mjs`);
  await esbuild.build({ entryPoints: [source], outfile: compiled, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
  const { startUpstashRestServer } = await import(pathToFileURL(compiled).href);
  rmSync(compiled, { force: true });
  const redis = await startThrowawayRedis();
  const { createClient } = require('redis');
  const env = {};
  const opened = [];
  const databases = {};
  let restScripts = 0;
  const countScripts = (args) => {
    const name = String(args[0]).toUpperCase();
    if (name === 'EVAL' || name === 'EVALSHA' || name === 'EVAL_RO' || name === 'EVALSHA_RO') restScripts++;
  };
  // Commands passed on and not yet answered. A script is counted here when it arrives and by the server when it
  // runs: a count taken between the two (a test file's background `pending`, still in flight as the file ends)
  // would put it in one file over REST and in the next over TCP. So the counts are read once none is in flight.
  let inFlight = 0;
  const passOn = (send) => {
    inFlight++;
    return send().finally(() => inFlight--);
  };
  for (const [prefix, database] of REGIONS) {
    const client = createClient({ socket: { host: '127.0.0.1', port: redis.port }, database });
    await client.connect();
    const server = await startUpstashRestServer({
      sendCommand: (args) => {
        countScripts(args);
        return passOn(() => client.sendCommand(args));
      },
      multi: (commands) => {
        const multi = client.multi();
        for (const command of commands) {
          countScripts(command);
          multi.addCommand(command);
        }
        return passOn(() => multi.exec());
      },
    });
    opened.push({ client, server });
    databases[server.url] = database;
    env[`${prefix}UPSTASH_REDIS_REST_URL`] = server.url;
    env[`${prefix}UPSTASH_REDIS_REST_TOKEN`] = server.token;
  }
  if (tcp) env.RATEKIT_UPSTREAM_TCP = JSON.stringify({ port: redis.port, databases });
  const stats = opened[0].client;
  return {
    env,
    note: `; Redis: a throwaway redis-server on port ${redis.port}, databases 0-3 (the default region, US1, APN, EU2) each behind a local Upstash REST endpoint${tcp ? ' and reached over TCP by an ioredis connection each (upstream/tcp-redis.mjs)' : ''}`,
    /** The scripts run so far: those the REST endpoints passed on, and all the server ran (INFO commandstats). */
    async scripts() {
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const info = await stats.info('commandstats');
      let all = 0;
      for (const [, calls] of info.matchAll(/^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro):calls=(\d+)/gm)) all += Number(calls);
      return { rest: restScripts, all };
    },
    async stop() {
      for (const { client, server } of opened) {
        await server.close();
        await client.quit().catch(() => undefined);
      }
      redis.stop();
    },
  };
}

// ---- bun ------------------------------------------------------------------------------------------------------

/** The workspace's bun: RATEKIT_BUN_BIN when set, else node_modules/.bin/bun, else PATH (as scripts/runtimes/run.mjs finds it). */
function findBun() {
  const override = process.env.RATEKIT_BUN_BIN;
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'bun'));
  for (const candidate of override ? [override] : [join(repoRoot, 'node_modules', '.bin', 'bun'), ...onPath]) {
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) return { path: candidate, version: probe.stdout.trim() };
  }
  return undefined;
}

/**
 * `bun test`, one process per file (a file's leftover promises, such as a background download of the IP deny
 * list that fails offline, then land in that file and not in the next); resolves
 * `{ tests: [{ file, fullName, status, message }], fileErrors: [{ file, message }], scripts: [{ file, rest, tcp }] }`
 * from the JUnit reports and the script counts (before and after each file).
 */
async function runBun(regions) {
  const all = { tests: [], fileErrors: [], scripts: [] };
  const started = Date.now();
  for (const file of inScope) {
    const left = SUITE_TIMEOUT_MS - (Date.now() - started);
    if (left <= 0) fail(`the tests ran past ${SUITE_TIMEOUT_MS / 1000} s: stopped before ${file}`);
    const before = await regions.scripts();
    const { tests, fileErrors } = await runBunFile(file, regions.env, left);
    const after = await regions.scripts();
    const overRest = after.rest - before.rest;
    all.scripts.push({ file, rest: overRest, tcp: after.all - before.all - overRest });
    all.tests.push(...tests);
    all.fileErrors.push(...fileErrors);
  }
  return all;
}

function runBunFile(file, env, timeoutMs) {
  const args = ['test', '--timeout', String(TEST_TIMEOUT_MS), '--reporter=junit', `--reporter-outfile=${resultsFile}`, `./${file}`];
  return new Promise((resolve, reject) => {
    const output = [];
    const child = spawn(bun.path, args, { cwd: work, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    const watchdog = setTimeout(() => {
      console.error(`✖ ${file} ran past ${Math.round(timeoutMs / 1000)} s: stopped`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      const log = Buffer.concat(output).toString('utf8');
      if (process.argv.includes('--verbose')) process.stdout.write(log);
      if (!existsSync(resultsFile)) {
        // A file that throws while its tests are collected (at its top level or in a describe) gets no report.
        const error = /^error: (.*)$/m.exec(log)?.[1] ?? log.trim().split('\n').at(-1);
        resolve({ tests: [], fileErrors: [{ file, message: `did not run (bun collected no test): ${error}` }] });
        return;
      }
      try {
        const { tests, fileErrors } = readJunit(readFileSync(resultsFile, 'utf8'), log);
        resolve({ tests: tests.map((t) => ({ ...t, file })), fileErrors: fileErrors.map((message) => ({ file, message })) });
      } catch (error) {
        process.stdout.write(log);
        reject(new Error(`bun's report of ${file} is unreadable: ${error.message}`));
      } finally {
        if (!process.argv.includes('--keep')) rmSync(resultsFile, { force: true });
      }
    });
  });
}

/** The tests of a JUnit report, each named as bun prints it: its describe blocks and its title, joined by " > ". */
function readJunit(xml, log) {
  const tests = [];
  const fileErrors = [];
  const stack = []; // open <testsuite> names
  const tag = /<(\/?)(testsuite|testcase)\b([^>]*?)(\/?)>|<(failure|error|skipped)\b([^>]*?)(\/?)>/g;
  let current;
  for (const match of xml.matchAll(tag)) {
    const [, closing, element, attributes = '', selfClosing, inner, innerAttributes = ''] = match;
    if (element === 'testsuite') {
      if (closing === '/') stack.pop();
      else if (selfClosing !== '/') stack.push(attribute(attributes, 'name') ?? '');
    } else if (element === 'testcase') {
      if (closing === '/') {
        current = undefined;
        continue;
      }
      const file = stack[0] ?? attribute(attributes, 'file') ?? '';
      const describes = stack.slice(1);
      current = { file, fullName: [...describes, attribute(attributes, 'name') ?? ''].join(' > '), status: 'passed', message: '' };
      tests.push(current);
      if (selfClosing === '/') current = undefined;
    } else if (current !== undefined) {
      if (inner === 'skipped') current.status = 'skipped';
      else {
        current.status = 'failed';
        current.message = attribute(innerAttributes, 'message') ?? attribute(innerAttributes, 'type') ?? inner;
      }
    }
  }
  // What bun reports outside the tests: an error between tests (its first `error:` line), a file that did not load.
  const blocks = log.split('# Unhandled error between tests').slice(1);
  for (const block of blocks) fileErrors.push(`unhandled error between tests: ${/^error: (.*)$/m.exec(block)?.[1] ?? block.trim().split('\n')[0]}`);
  const loadError = /^error: (Cannot find module .*|.*SyntaxError.*)$/m.exec(log);
  if (loadError !== null && tests.length === 0) fileErrors.push(`did not load: ${loadError[1]}`);
  return { tests, fileErrors };
}

function attribute(attributes, name) {
  const found = new RegExp(`\\b${name}="([^"]*)"`).exec(attributes);
  return found === null ? undefined : decode(found[1]);
}

function decode(text) {
  return text.replaceAll('&quot;', '"').replaceAll('&apos;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#10;', ' ').replaceAll('&amp;', '&');
}
