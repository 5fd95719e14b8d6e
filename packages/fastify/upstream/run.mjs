#!/usr/bin/env node
// Runs @fastify/rate-limit's own published test suite, unchanged, against @ratekit/fastify's build.
//
//   node packages/fastify/upstream/run.mjs [--keep] [--control] [test-file-filter]
//
// --control runs the same suite against the real @fastify/rate-limit (the devDependency) instead, to
// show what the incumbent scores on its own suite in the same setup.
// 1. `npm pack @fastify/rate-limit@<version>` into packages/fastify/.upstream (git-ignored, never committed)
//    and unpack it; the package's own `index.js` becomes a one-line re-export of ../../dist/index.cjs, so
//    the test files' `require('../index')` loads ours. The test files themselves are not touched.
// 2. Start a throwaway redis-server on a free loopback port; ioredis-port.cjs points the suite's
//    ioredis clients (which name no port) at it.
// 3. `node --test` over every test file in one run (the whole suite, as upstream runs it), TAP output.
// 4. Print the counts and every failing test; exit 1 when a test fails that differences.json does not
//    list (each entry names the deliberate difference in docs/migrating/fastify-rate-limit.md), or when a
//    listed test passes (the list must stay true).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unpackFromNpm } from '../../../scripts/lib/npm-tarball.mjs';
import { fail, startThrowawayRedis } from '../../../scripts/lib/throwaway-redis.mjs';

const VERSION = '11.2.0';
const TEST_TIMEOUT_MS = 30_000;
const SUITE_TIMEOUT_MS = 300_000;
const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const work = join(packageDir, '.upstream');
const suiteDir = join(work, 'package');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const control = args.includes('--control');
const subject = control ? '@fastify/rate-limit' : '@ratekit/fastify';
const filter = args.find((a) => !a.startsWith('--'));

const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));

if (!existsSync(join(packageDir, 'dist', 'index.cjs'))) fail('packages/fastify/dist/index.cjs is missing: build first (pnpm build)');
checkCommonJsExport(createRequire(import.meta.url)(join(packageDir, 'dist', 'index.cjs')));

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
unpackFromNpm(`@fastify/rate-limit@${VERSION}`, work);
const target = control ? '@fastify/rate-limit' : '../../dist/index.cjs';
writeFileSync(join(suiteDir, 'index.js'), `'use strict'\nmodule.exports = require(${JSON.stringify(target)})\n`);

const files = listTests(join(suiteDir, 'test'))
  .map((f) => relative(suiteDir, f))
  .filter((f) => filter === undefined || f.includes(filter))
  .sort();

const redis = await startThrowawayRedis();

let results;
try {
  results = await runSuite(files, redis.port);
} finally {
  redis.stop();
  if (!keep) rmSync(work, { recursive: true, force: true });
}

const failed = results.filter((r) => !r.ok);
const passed = results.length - failed.length;
console.log(`\n@fastify/rate-limit ${VERSION}'s own suite against ${subject}: ${passed} passed, ${failed.length} failed, of ${results.length} tests (${files.length} files, one node --test run)`);
let unexpected = 0;
for (const r of failed) {
  const reason = control ? 'control run' : differences[r.name];
  if (reason === undefined) unexpected++;
  console.log(`  ✖ ${r.name}${reason === undefined ? '   <- NOT a documented difference' : `   (documented: ${reason})`}`);
}
const stale = filter === undefined && !control ? Object.keys(differences).filter((name) => !failed.some((r) => r.name === name)) : [];
for (const name of stale) console.log(`  ! listed in differences.json but did not fail: ${name}`);
if (unexpected > 0 || stale.length > 0) {
  console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length} stale difference(s)`);
  process.exit(1);
}
console.log(failed.length === 0 ? '✔ every test passed' : '✔ every failure is a documented difference (docs/migrating/fastify-rate-limit.md)');

/** Runs the files in one `node --test` process tree and returns each leaf test's name and outcome. */
function runSuite(testFiles, port) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', join(here, 'ioredis-port.cjs'), '--test', '--test-reporter=tap', '--test-force-exit', `--test-timeout=${TEST_TIMEOUT_MS}`, ...testFiles], {
      cwd: suiteDir,
      env: { ...process.env, RATEKIT_UPSTREAM_REDIS_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let tap = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      tap += chunk;
    });
    // A suite that never ends (a client left open) must not hold CI: stop it and report what ran.
    const watchdog = setTimeout(() => {
      console.error(`✖ the suite ran past ${SUITE_TIMEOUT_MS / 1000} s: stopped`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      resolve(parseTap(tap));
    });
  });
}

/**
 * The leaf tests of node's TAP output: `ok N - name` / `not ok N - name` lines, where a test with
 * subtests (a file, a `describe`) is reported after its children and is skipped here.
 */
function parseTap(tap) {
  const lines = tap.split('\n');
  const results = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(lines[i]);
    if (match === null) continue;
    const indent = match[1].length;
    // A parent's result follows its children, which are indented deeper just above it.
    let parent = false;
    for (let k = i - 1; k >= 0; k--) {
      const m = /^(\s*)(?:not ok|ok) \d+ - /.exec(lines[k]);
      if (m === null) continue;
      parent = m[1].length > indent;
      break;
    }
    if (!parent) results.push({ name: match[3].replace(/\\#/g, '#'), ok: match[2] === 'ok' });
  }
  return results;
}

/** As upstream's: `require()` gives the plugin itself, carrying `.default`, `.fastifyRateLimit` and `.normalizeIP`. */
function checkCommonJsExport(exported) {
  const problems = [];
  if (typeof exported !== 'function') problems.push('the export is not a function');
  if (exported.default !== exported || exported.fastifyRateLimit !== exported) problems.push('.default and .fastifyRateLimit are not the plugin');
  if (exported.normalizeIP?.('2001:db8::1:2:3:4') !== '2001:db8::') problems.push('.normalizeIP is missing or wrong');
  if (problems.length > 0) fail(`require('@ratekit/fastify'): ${problems.join('; ')}`);
}

function listTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listTests(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}
