#!/usr/bin/env node
// Runs koa-ratelimit 6's own specs (test/memory.spec.js, test/redis.spec.js from GitHub koajs/ratelimit;
// they are not in its npm tarball), unchanged, against @ratekit/koa's build.
//
//   node packages/koa/upstream/run.mjs [--control] [--keep-redis-output]
//
// --control runs the same specs against the real koa-ratelimit (the devDependency) instead.
//
// 1. The spec files must be in packages/koa/.upstream/test/ (git-ignored, never committed; fetch them
//    by hand from the koajs/ratelimit repository). Without them this prints one line and exits 0.
// 2. .upstream/index.js is written as a one-line re-export of ../dist/index.cjs (or of koa-ratelimit
//    with --control), so the specs' `require('..')` loads the subject. Everything else they require
//    (koa, supertest, ioredis, should) resolves from packages/koa's devDependencies.
// 3. A throwaway redis-server on a free loopback port; redis-port.cjs points the specs' `new Redis()`
//    at it (they would otherwise use, and flush `limit:*` on, 127.0.0.1:6379).
// 4. mocha -r should --exit (upstream's own test command), JSON results; print the counts and every
//    failing spec. Exit 1 when a spec fails that differences.json does not list (each entry names a
//    deliberate difference in docs/migrating/koa-ratelimit.md), or a listed one passes.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail, startThrowawayRedis } from '../../../scripts/lib/throwaway-redis.mjs';

const SPECS = ['test/memory.spec.js', 'test/redis.spec.js'];
const SPEC_TIMEOUT_MS = 10_000;
/**
 * Specs that fail against koa-ratelimit itself (the --control run), so against any drop-in: a spec
 * whose assertion cannot hold. They are counted as failures and named, never hidden.
 */
const FAILS_ON_UPSTREAM = {
  'ratelimit middleware with memory driver onLimit should allow specifying an onLimit callback':
    'asserts `.expect(testValue, 1)`, i.e. HTTP status 0 (testValue is read before the request), and passes `onLimit`, an option koa-ratelimit does not have',
};
const SUITE_TIMEOUT_MS = 300_000;
const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const work = join(packageDir, '.upstream');
const require = createRequire(join(packageDir, 'package.json'));
const control = process.argv.includes('--control');
const subject = control ? 'koa-ratelimit 6.0.0' : '@ratekit/koa';

const missing = SPECS.filter((file) => !existsSync(join(work, file)));
if (missing.length > 0) {
  console.log(`skipped: koa-ratelimit's specs are not in packages/koa/.upstream/ (${missing.join(', ')} missing; they are not on npm, fetch them from koajs/ratelimit)`);
  process.exit(0);
}
if (!control && !existsSync(join(packageDir, 'dist', 'index.cjs'))) fail('packages/koa/dist/index.cjs is missing: build first (pnpm --filter @ratekit/koa build)');
if (!control) checkCommonJsExport(require(join(packageDir, 'dist', 'index.cjs')));

const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));
const target = control ? require.resolve('koa-ratelimit') : '../dist/index.cjs';
// The specs are CommonJS, as koa-ratelimit's package is (packages/koa's package.json says "type": "module").
writeFileSync(join(work, 'package.json'), `${JSON.stringify({ name: 'koa-ratelimit-specs', private: true, type: 'commonjs' })}\n`);
writeFileSync(join(work, 'index.js'), `'use strict';\nmodule.exports = require(${JSON.stringify(target)});\n`);

const redis = await startThrowawayRedis();
const resultsFile = join(work, `results-${process.pid}.json`);
let results;
try {
  results = await runMocha(redis.port);
} finally {
  redis.stop();
}

const failed = results.failures.map((t) => t.fullTitle);
const passed = results.passes.length;
const total = results.stats.tests;
console.log(`\nkoa-ratelimit's own specs (${SPECS.join(', ')}) against ${subject}: ${passed} passed, ${failed.length} failed, of ${total} specs (mocha -r should)`);
let unexpected = 0;
for (const name of failed) {
  const reason = FAILS_ON_UPSTREAM[name] === undefined ? differences[name] : `fails on koa-ratelimit too: ${FAILS_ON_UPSTREAM[name]}`;
  if (reason === undefined) unexpected++;
  const error = results.failures.find((t) => t.fullTitle === name)?.err?.message?.split('\n')[0] ?? '';
  console.log(`  ✖ ${name}${reason === undefined ? `   <- NOT a documented difference: ${error}` : `   (${reason})`}`);
}
const stale = control ? Object.keys(FAILS_ON_UPSTREAM).filter((name) => !failed.includes(name)) : Object.keys(differences).filter((name) => !failed.includes(name));
for (const name of stale) console.log(`  ! listed as failing but passed: ${name}`);
if (unexpected > 0 || stale.length > 0) {
  console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length} stale difference(s)`);
  process.exit(1);
}
console.log(failed.length === 0 ? '✔ every spec passed' : '✔ every failure fails on koa-ratelimit too, or is a documented difference (docs/migrating/koa-ratelimit.md)');

/** One mocha run over both spec files, as upstream's `mocha -r should --exit`; resolves mocha's JSON report. */
function runMocha(port) {
  const mocha = join(dirname(require.resolve('mocha/package.json')), 'bin', 'mocha.js');
  const args = [
    mocha,
    '--require',
    require.resolve('should'),
    '--require',
    join(here, 'redis-port.cjs'),
    '--exit',
    '--timeout',
    String(SPEC_TIMEOUT_MS),
    '--reporter',
    'json',
    '--reporter-option',
    `output=${resultsFile}`,
    ...SPECS,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: work, env: { ...process.env, RATEKIT_UPSTREAM_REDIS_PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit'] });
    // Specs that never end (a client left open) must not hold CI.
    const watchdog = setTimeout(() => {
      console.error(`✖ the specs ran past ${SUITE_TIMEOUT_MS / 1000} s: stopped`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      try {
        resolve(JSON.parse(readFileSync(resultsFile, 'utf8')));
      } catch (error) {
        reject(new Error(`mocha wrote no results: ${error.message}`));
      } finally {
        rmSync(resultsFile, { force: true });
      }
    });
  });
}

/** As koa-ratelimit's: `require()` gives the middleware factory itself, carrying the named exports. */
function checkCommonJsExport(exported) {
  const problems = [];
  if (typeof exported !== 'function') problems.push('the export is not a function');
  else if (exported.default !== exported || exported.ratelimit !== exported || exported.rateLimit !== exported) problems.push('.default, .ratelimit and .rateLimit are not the factory');
  if (problems.length > 0) fail(`require('@ratekit/koa'): ${problems.join('; ')}`);
}
