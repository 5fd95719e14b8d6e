#!/usr/bin/env node
// Runs rate-limiter-flexible's own mocha tests (tag v11.1.0, the newest tag of animir/node-rate-limiter-flexible),
// unchanged, against @ratekit/flexible's build.
//
//   node packages/flexible/upstream/run.mjs [--control] [--only <Name>[,<Name>…]]
//
// --control runs the same files against the real rate-limiter-flexible 11.4.0 (the devDependency) instead:
// what fails there fails on any drop-in (a v11.1.0 test of a behaviour 11.4.0 changed).
// --only runs the named files only (e.g. --only RateLimiterMemory,RateLimiterRes), for local work; the
// listed-difference check then covers those files only.
//
// 1. The test files must be in packages/flexible/.upstream/test/ (git-ignored, never committed):
//      mkdir -p packages/flexible/.upstream && git --git-dir=<mirror of animir/node-rate-limiter-flexible> \
//        archive v11.1.0 test | tar -x -C packages/flexible/.upstream
//    Without them this prints one line and exits 0.
// 2. .upstream/lib/<path>.js is written for every deep path rlf's tests require (scripts/deep-paths.mjs's
//    list): `module.exports = require(<our dist/lib/<path>.cjs>)`, the file a user's
//    require('@ratekit/flexible/lib/<path>.js') loads. chai, sinon, mocha, ioredis, redis, memcached-mock and
//    pg resolve from packages/flexible's devDependencies.
// 3. The Redis files flush their database: REDIS (upstream/redis.mjs) starts a throwaway redis-server and
//    points their 127.0.0.1:6379 clients at it.
// 4. One mocha run (JSON reporter) per in-scope file (a file that crashes its process is a failure); print the counts and every failure. Exit 1 when
//    a failure is not listed in upstream/differences.json (full title -> the reason; each reason is also in
//    docs/migrating/rate-limiter-flexible.md), or a listed one passes.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATHS } from '../scripts/deep-paths.mjs';
import { REDIS_TEST_FILES, startUpstreamRedis } from './redis.mjs';

/** The files run: rlf's tests of the classes @ratekit/flexible implements. */
const IN_SCOPE = [
  'RateLimiterAbstract',
  'RateLimiterRes',
  'RateLimiterMemory',
  'RateLimiterMemoryPersistence',
  'RateLimiterCompatibleAbstract',
  'RateLimiterInsuredAbstract',
  'RateLimiterStoreAbstract',
  'RateLimiterUnion',
  'RateLimiterQueue',
  'BurstyRateLimiter',
  'RLWrapperBlackAndWhite',
  'RLWrapperTimeouts',
  'RateLimiterCluster',
  'component/RateLimiterQueueError',
  'RateLimiterRedis.ioredis',
  'RateLimiterRedis.redis',
  'RateLimiterMemcache',
  'RateLimiterPostgres',
].map((name) => `test/${name}.test.js`);

/** The files not run, and why (printed on every run, so the scope is never silent). */
const OUT_OF_SCOPE = {
  'test/component/BlockedKeys/BlockedKeys.test.js': "rlf's internal class (index.js does not export it); its behaviour is tested through RateLimiterStoreAbstract's inMemoryBlockOnConsumed tests",
  'test/component/MemoryStorage/MemoryStorage.test.js': "rlf's internal class, built on one setTimeout per key, which ratekit's memory store does not use; tested through RateLimiterMemory",
  'test/component/MemoryStorage/Record.test.js': "rlf's internal class; tested through RateLimiterMemory",
  'test/ExpressBruteFlexible.test.js':
    "not wired here (it requires rlf's ../index and builds limiters on Mongo and MySQL mocks too); lib/ExpressBruteFlexible is checked against rlf's own class by a differential property (src/express-brute.test.ts)",
  'test/RateLimiterValkey*.test.js, test/RateLimiterRedisNonAtomic*.test.js':
    "not wired here (rlf's Valkey script needs a Valkey 8 server); both run RateLimiterRedis's script, checked in mixed fleets with rlf 11.4 (src/redis-variants.test.ts)",
  'Mongo, MySQL, DynamoDB, Prisma, Drizzle, SQLite, ValkeyGlide, Etcd, EtcdNonAtomic': 'out-of-scope stores: constructing one throws ERR_RATEKIT_FLEXIBLE_UNSUPPORTED_STORE',
};

const TEST_TIMEOUT_MS = 10_000;
const SUITE_TIMEOUT_MS = 300_000; // per file
const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const work = join(packageDir, '.upstream');
const require = createRequire(join(packageDir, 'package.json'));
const control = process.argv.includes('--control');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1].split(',').map((name) => `test/${name}.test.js`) : undefined;
const subject = control ? 'rate-limiter-flexible 11.4.0' : '@ratekit/flexible';

if (!existsSync(join(work, 'test'))) {
  console.log("skipped: rate-limiter-flexible's tests are not in packages/flexible/.upstream/test (fetch tag v11.1.0's test/ folder from animir/node-rate-limiter-flexible)");
  process.exit(0);
}
if (!control && !existsSync(join(packageDir, 'dist', 'lib', 'RateLimiterMemory.cjs'))) fail('packages/flexible/dist/lib is missing: build first (pnpm --filter @ratekit/flexible build)');

const files = (only ?? IN_SCOPE).filter((file) => {
  if (existsSync(join(work, file))) return true;
  fail(`${file} is missing from packages/flexible/.upstream (fetch the whole test/ folder of v11.1.0)`);
  return false;
});

writeShims();
const allDifferences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));
const differences = control ? {} : allDifferences;

// ---- Redis (upstream/redis.mjs): a throwaway server for the files that flush their database. ----
const needsRedis = files.some((file) => REDIS_TEST_FILES.includes(file));
const redis = needsRedis ? await startUpstreamRedis() : { env: {}, mochaArgs: [], stop() {} };
// ---- end of the Redis part ----

// One mocha process per file, so a file that crashes its process is reported and the others still run.
const results = { passes: [], failures: [], pending: [], stats: { tests: 0 } };
const crashed = [];
try {
  for (const file of files) {
    const report = await runMocha(file);
    if (report === undefined) {
      crashed.push(file);
      continue;
    }
    results.passes.push(...report.passes);
    results.failures.push(...report.failures);
    results.pending.push(...report.pending);
    results.stats.tests += report.stats.tests;
  }
} finally {
  redis.stop();
}

const failed = results.failures.map((t) => t.fullTitle);
console.log(
  `\nrate-limiter-flexible v11.1.0's own tests (${files.length} files) against ${subject}: ${results.passes.length} passed, ${failed.length} failed, ${results.pending.length} pending, of ${results.stats.tests} tests (mocha)`,
);
for (const [file, reason] of Object.entries(OUT_OF_SCOPE)) if (only === undefined) console.log(`  - not run: ${file}: ${reason}`);
let unexpected = crashed.length;
for (const file of crashed) console.log(`  ✖ ${file}: mocha exited without a report (the file crashed its process; its output is above)   <- NOT a documented difference`);
for (const name of failed) {
  const reason = differences[name];
  if (reason === undefined) unexpected++;
  const error = results.failures.find((t) => t.fullTitle === name)?.err?.message?.split('\n')[0] ?? '';
  console.log(`  ✖ ${name}${reason === undefined ? `   <- NOT a documented difference: ${error}` : `   (${reason})`}`);
}
// A listed difference whose test ran and passed is stale; with --only, tests of other files did not run.
const ran = new Set([...results.passes, ...results.failures].map((t) => t.fullTitle));
const stale = Object.keys(differences).filter((name) => ran.has(name) && !failed.includes(name));
const notRun = only === undefined ? Object.keys(differences).filter((name) => !ran.has(name)) : [];
for (const name of stale) console.log(`  ! listed as a difference but passed: ${name}`);
for (const name of notRun) console.log(`  ! listed as a difference but no such test ran: ${name}`);
if (unexpected > 0 || stale.length > 0 || notRun.length > 0) {
  console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length + notRun.length} stale difference(s)`);
  process.exit(1);
}
console.log(failed.length === 0 ? '✔ every test passed' : '✔ every failure is a documented difference (docs/migrating/rate-limiter-flexible.md)');

/** .upstream/package.json (CommonJS, as rlf) and one lib/<path>.js per deep path rlf's tests require. */
function writeShims() {
  writeFileSync(join(work, 'package.json'), `${JSON.stringify({ name: 'rate-limiter-flexible-tests', private: true, type: 'commonjs' })}\n`);
  rmSync(join(work, 'lib'), { recursive: true, force: true });
  for (const path of Object.keys(PATHS)) {
    const shim = join(work, 'lib', `${path}.js`);
    mkdirSync(dirname(shim), { recursive: true });
    const target = control ? require.resolve(`rate-limiter-flexible/lib/${path}`) : join(packageDir, 'dist', 'lib', `${path}.cjs`);
    const from = relative(dirname(shim), target).split('\\').join('/');
    writeFileSync(shim, `'use strict';\nmodule.exports = require(${JSON.stringify(from.startsWith('.') ? from : `./${from}`)});\n`);
  }
}

/** One mocha run over one file; resolves mocha's JSON report, or undefined when the process wrote none. */
function runMocha(file) {
  const resultsFile = join(work, `results-${process.pid}.json`);
  const mocha = join(dirname(require.resolve('mocha/package.json')), 'bin', 'mocha.js');
  const args = [mocha, ...redis.mochaArgs, '--exit', '--timeout', String(TEST_TIMEOUT_MS), '--reporter', 'json', '--reporter-option', `output=${resultsFile}`, file];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: work, env: { ...process.env, ...redis.env }, stdio: ['ignore', 'inherit', 'inherit'] });
    // Tests that never end (a client left open) must not hold CI.
    const watchdog = setTimeout(() => {
      console.error(`✖ ${file} ran past ${SUITE_TIMEOUT_MS / 1000} s: stopped`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      try {
        resolve(existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined);
      } catch (error) {
        reject(new Error(`mocha's report for ${file} is not JSON: ${error.message}`));
      } finally {
        rmSync(resultsFile, { force: true });
      }
    });
  });
}

function fail(message) {
  console.error(`✖ ${message}`);
  process.exit(1);
}
