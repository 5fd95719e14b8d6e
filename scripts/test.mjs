#!/usr/bin/env node
// `pnpm test`: everything CI checks, in order. Stops at the first failure.
//   0. make sure the server binaries the store tests start are on the machine (memcached)
//   1. type-check the whole workspace (strict TypeScript), then lint it (ESLint, type-aware rules) and
//      check its formatting (Prettier)
//   2. jest: unit, property, integration and store tests (test/setup starts the servers it needs)
//   3. build every package (ESM + CJS + types) and check the packaging with publint and attw; then
//      the packed types as an app compiles them (scripts/type-tests.mjs); and examples/nextjs-middleware, which
//      imports the builds, built with `next build`, started with `next start` and sent its demo traffic
//   4. the runtime matrix (scripts/runtimes): the runtime tests, bundled from the builds, on Bun, Deno and workerd
//      (Node 20 and 24 run them in step 2, CI running `pnpm test` once on each)
//   5. the incumbents' own published test suites against our builds (@fastify/rate-limit 11.2.0;
//      express-rate-limit's, express-slow-down's and @nestjs/throttler's, which they do not publish, when
//      fetched into packages/express/.upstream and packages/nestjs/.upstream; hono-rate-limiter's, rate-limiter-flexible's
//      and upstash/ratelimit-js's likewise, into packages/{hono,flexible,upstash}/.upstream; upstash/ratelimit-js's
//      twice: over HTTP, and over TCP with --tcp)
import { spawnSync } from 'node:child_process';

const steps = [
  ['services', 'bash', ['scripts/ensure-memcached.sh']],
  ['typecheck', 'tsc', ['-p', 'tsconfig.json', '--noEmit']],
  ['lint', 'eslint', ['.']],
  ['format', 'prettier', ['--check', '.']],
  ['jest', 'jest', ['--ci', ...process.argv.slice(2)]],
  ['build', 'pnpm', ['build']],
  ['package checks', 'pnpm', ['check:packages']],
  ['examples/nextjs-middleware: next build, next start, its demo traffic (pnpm demo nextjs)', 'node', ['examples/demo.mjs', 'nextjs']],
  ['type tests (packed types, tsc --strict, node16 + bundler; @fastify/rate-limit 11.2.0 index.tst.ts)', 'node', ['scripts/type-tests.mjs']],
  ['runtime matrix: runtime tests and edge stores, built, on Bun, Deno and workerd (Node: the jest step)', 'node', ['scripts/runtimes/run.mjs']],
  ['@fastify/rate-limit 11.2.0 suite', 'node', ['packages/fastify/upstream/run.mjs']],
  ['koa-ratelimit 6.0.0 specs (skipped unless fetched into packages/koa/.upstream)', 'node', ['packages/koa/upstream/run.mjs']],
  ["express-rate-limit v8.6.2's own tests (skipped unless fetched into packages/express/.upstream)", 'node', ['packages/express/upstream/run.mjs']],
  ["express-slow-down 3.1.0's own tests (skipped unless fetched into packages/express/.upstream/express-slow-down)", 'node', ['packages/express/upstream/slow-down.mjs']],
  ["@nestjs/throttler's own tests (skipped unless fetched into packages/nestjs/.upstream)", 'node', ['packages/nestjs/upstream/run.mjs']],
  ["hono-rate-limiter's own tests (skipped unless fetched into packages/hono/.upstream)", 'node', ['packages/hono/upstream/run.mjs']],
  ["rate-limiter-flexible v11.1.0's own tests (skipped unless fetched into packages/flexible/.upstream)", 'node', ['packages/flexible/upstream/run.mjs']],
  ["@upstash/ratelimit's own tests (skipped unless fetched into packages/upstash/.upstream)", 'node', ['packages/upstash/upstream/run.mjs']],
  ["@upstash/ratelimit's own tests over TCP (ioredis; skipped unless fetched into packages/upstash/.upstream)", 'node', ['packages/upstash/upstream/run.mjs', '--tcp']],
];

for (const [name, command, args] of steps) {
  console.log(`\n▶ ${name}: ${command} ${args.join(' ')}`);
  const started = Date.now();
  const result = spawnSync(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error(`✖ ${name} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
