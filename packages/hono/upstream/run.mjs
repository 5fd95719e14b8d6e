#!/usr/bin/env node
// Runs hono-rate-limiter's own vitest suite, unchanged, against @ratekit/hono's build.
//
//   node packages/hono/upstream/run.mjs [--control]
//
// --control runs the same tests against the real hono-rate-limiter 0.5.4 (the devDependency).
//
// 1. The tests must be in packages/hono/.upstream/src/ (git-ignored, never committed). Fetch them from
//    the mirrored repository, at the commit this runner was written against:
//      mkdir -p packages/hono/.upstream && git --git-dir=/work/.mirror/rhinobase+hono-rate-limiter/repo \
//        archive 20623ad00cd64d985a0c12670d8c12fa2b99981c src | tar -x -C packages/hono/.upstream
//    (rhinobase/hono-rate-limiter 20623ad, 2026-05-10: v0.5.3 plus a typo fix; npm's 0.5.4 is built from it.)
//    Without them this prints one line and exits 0.
// 2. The library's own source files the tests import (../rateLimiter, ../types, ../headers, ../websocket,
//    ../stores/memory, ../stores/redis/store) are replaced by one-line shims re-exporting
//    packages/hono/dist/compat.js (or hono-rate-limiter's dist with --control). Everything else the tests
//    import (hono, @hono/node-server, @hono/node-ws, supertest, @upstash/redis, vitest) resolves from
//    packages/hono's devDependencies and the workspace root.
// 3. The Redis store's tests (src/stores/redis/__tests__, which FLUSHALL) get a throwaway redis-server on a
//    free port behind the local Upstash REST endpoint of @ratekit/test-utils (upstash-rest-server.ts, through node-redis;
//    compiled here with esbuild), through the UPSTASH_REDIS_REST_URL/TOKEN variables they read.
// 4. vitest run, JSON results; print the counts and every failing test. Exit 1 when a test fails that
//    differences.json does not list (each entry is a deliberate difference, explained there and in
//    docs/migrating/hono-rate-limiter.md), or a listed one passes.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fail, startThrowawayRedis } from '../../../scripts/lib/throwaway-redis.mjs';

const UPSTREAM_COMMIT = '20623ad00cd64d985a0c12670d8c12fa2b99981c';
const TEST_DIRS = ['src/__tests__', 'src/stores/redis/__tests__'];
const SHIMS = [
  'src/rateLimiter.ts',
  'src/types.ts',
  'src/headers.ts',
  'src/websocket.ts',
  'src/index.ts',
  'src/stores/memory.ts',
  'src/stores/index.ts',
  'src/stores/redis/store.ts',
  'src/stores/redis/index.ts',
];
const SUITE_TIMEOUT_MS = 300_000;
/**
 * Tests that fail against hono-rate-limiter itself (the --control run), so against any drop-in: a test
 * whose assertion cannot hold. They are counted as failures and named, never hidden.
 */
const FAILS_ON_UPSTREAM = {
  'redis store test decrements the key for the store when `decrement` is called':
    'sets windowMs 2000, then asserts the key expires in under 1000 ms, which only a window under 1 s can give (hono-rate-limiter 0.5.4 fails it the same way)',
};
/** With --control: a test of an internal the npm build does not export. */
const CONTROL_ONLY = {
  'headers test should not attempt to set headers if request.headersSent is true': "imports setDraft6Headers from the library's source; hono-rate-limiter's npm build does not export it",
};

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const repoRoot = dirname(dirname(packageDir));
const work = join(packageDir, '.upstream');
const require = createRequire(join(packageDir, 'package.json'));
const control = process.argv.includes('--control');
const subject = control ? 'hono-rate-limiter 0.5.4' : '@ratekit/hono';

const missing = TEST_DIRS.filter((dir) => !existsSync(join(work, dir)));
if (missing.length > 0) {
  console.log(
    `skipped: hono-rate-limiter's tests are not in packages/hono/.upstream/ (${missing.join(', ')} missing; fetch them from rhinobase/hono-rate-limiter ${UPSTREAM_COMMIT.slice(0, 7)}, see packages/hono/upstream/run.mjs)`,
  );
  process.exit(0);
}
const target = control ? join(packageDir, 'node_modules', 'hono-rate-limiter', 'dist', 'index.js') : join(packageDir, 'dist', 'compat.js');
if (!existsSync(target)) fail(`${relative(repoRoot, target)} is missing: build first (pnpm --filter @ratekit/hono build)`);

// The shims: the tests' relative imports of the library's own files land on the build under test.
for (const file of SHIMS) {
  const path = join(work, file);
  mkdirSync(dirname(path), { recursive: true });
  let from = relative(dirname(path), target).replaceAll('\\', '/');
  if (!from.startsWith('.')) from = `./${from}`;
  writeFileSync(path, `// Written by packages/hono/upstream/run.mjs: the library under test is ${subject}.\nexport * from ${JSON.stringify(from)};\n`);
}
writeFileSync(join(work, 'package.json'), `${JSON.stringify({ name: 'hono-rate-limiter-tests', private: true, type: 'module' })}\n`);
// Upstream's config loads dotenv; the variables come from this runner instead.
writeFileSync(join(work, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.spec.ts'], testTimeout: 30000 } };\n");

const differences = JSON.parse(readFileSync(join(here, 'differences.json'), 'utf8'));
const rest = await startRedisRest();
const resultsFile = join(work, `results-${process.pid}.json`);
let results;
try {
  results = await runVitest(rest.env);
} finally {
  await rest.stop();
}

const tests = results.testResults.flatMap((file) => file.assertionResults.map((t) => ({ ...t, file: relative(work, file.name) })));
const failed = tests.filter((t) => t.status === 'failed');
const passed = tests.filter((t) => t.status === 'passed').length;
const skipped = tests.filter((t) => t.status !== 'passed' && t.status !== 'failed').length;
const fileErrors = results.testResults.filter((file) => file.status === 'failed' && file.assertionResults.length === 0);
console.log(
  `\nhono-rate-limiter's own tests (${TEST_DIRS.join(', ')} at ${UPSTREAM_COMMIT.slice(0, 7)}) against ${subject}: ${passed} passed, ${failed.length} failed, ${skipped} skipped, of ${tests.length} tests (vitest run)${rest.note}`,
);
for (const file of fileErrors) console.log(`  ✖ ${relative(work, file.name)} did not run: ${String(file.message).split('\n')[0]}`);
let unexpected = fileErrors.length;
for (const t of failed) {
  const upstream = FAILS_ON_UPSTREAM[t.fullName] ?? (control ? CONTROL_ONLY[t.fullName] : undefined);
  const reason = upstream === undefined ? (control ? undefined : differences[t.fullName]) : `fails on hono-rate-limiter too: ${upstream}`;
  if (reason === undefined) unexpected++;
  const error = (t.failureMessages?.[0] ?? '').split('\n')[0];
  console.log(`  ✖ ${t.fullName}${reason === undefined ? `   <- NOT a documented difference: ${error}` : `   (${reason})`}`);
}
const listed = control ? { ...FAILS_ON_UPSTREAM, ...CONTROL_ONLY } : differences;
const stale = Object.keys(listed).filter((name) => !failed.some((t) => t.fullName === name));
for (const name of stale) console.log(`  ! listed as failing but passed (or did not run): ${name}`);
if (unexpected > 0 || stale.length > 0) {
  console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length} stale difference(s)`);
  process.exit(1);
}
console.log(
  failed.length === 0
    ? '✔ every test passed'
    : '✔ every failure fails on hono-rate-limiter too, or is a documented difference (packages/hono/upstream/differences.json, docs/migrating/hono-rate-limiter.md)',
);

/** A throwaway redis-server behind @ratekit/test-utils' Upstash REST endpoint; `env` for the tests. */
async function startRedisRest() {
  const source = join(repoRoot, 'packages', 'test-utils', 'src', 'upstash-rest-server.ts');
  if (!existsSync(source)) fail(`${relative(repoRoot, source)} is missing: the Redis store's tests need its Upstash REST endpoint`);
  const esbuild = createRequire(join(repoRoot, 'package.json'))('esbuild');
  const compiled = join(work, `upstash-rest-server-${process.pid}.mjs`);
  await esbuild.build({ entryPoints: [source], outfile: compiled, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
  const { startUpstashRestServer } = await import(pathToFileURL(compiled).href);
  rmSync(compiled, { force: true });
  const redis = await startThrowawayRedis();
  // node-redis, a devDependency of packages/hono.
  const { createClient } = require('redis');
  const client = createClient({ socket: { host: '127.0.0.1', port: redis.port } });
  await client.connect();
  const server = await startUpstashRestServer({ sendCommand: (args) => client.sendCommand(args) });
  return {
    env: { UPSTASH_REDIS_REST_URL: server.url, UPSTASH_REDIS_REST_TOKEN: server.token },
    note: `; Redis: a throwaway redis-server on port ${redis.port} behind a local Upstash REST endpoint`,
    async stop() {
      await server.close();
      await client.quit().catch(() => undefined);
      redis.stop();
    },
  };
}

/** One `vitest run` over the fetched tests; resolves vitest's JSON report. */
function runVitest(env) {
  const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
  const args = [vitest, 'run', '--config', 'vitest.config.mjs', '--reporter=json', `--outputFile=${resultsFile}`];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
    const watchdog = setTimeout(() => {
      console.error(`✖ the tests ran past ${SUITE_TIMEOUT_MS / 1000} s: stopped`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      try {
        resolve(JSON.parse(readFileSync(resultsFile, 'utf8')));
      } catch (error) {
        reject(new Error(`vitest wrote no results: ${error.message}`));
      } finally {
        rmSync(resultsFile, { force: true });
      }
    });
  });
}
