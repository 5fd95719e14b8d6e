#!/usr/bin/env node
// The adapters' types as a user's app sees them: packed, installed, compiled with `tsc --strict` and
// `skipLibCheck: false`, under `moduleResolution: node16` (CommonJS and ESM files) and `bundler`.
//
//   node scripts/type-tests.mjs [--keep] [--tarballs <dir>] [--control]      (after `pnpm build`)
//
// 1. `pnpm pack` @ratekit/core, express, koa, fastify, fetch and hono, and unpack each tarball into a temp project's
//    node_modules (what `npm install <tarball>` lays down); the frameworks and their type packages are
//    linked in from the workspace. `--tarballs <dir>` takes tarballs packed earlier instead.
// 2. The probes (packages/{express,koa,fastify,fetch,hono}/type-tests/*.cts|*.mts, ours): `import x = require()`,
//    default and named imports, http2, custom stores, and `// @ts-expect-error` lines for wrong usage
//    (an expected error that does not come is itself an error, so the probes can fail). One `tsc` run
//    per resolution: node16 (`.cts` files compile as CommonJS, `.mts` as ESM) and bundler.
// 3. @fastify/rate-limit 11.2.0's own type test, `types/index.tst.ts`, from its npm tarball (fetched
//    now, never committed), its import specifier `'..'` changed to '@ratekit/fastify' and nothing else,
//    run with tstyche under both resolutions (a compile error in the file fails it too).
//    --control runs only this test, against the real @fastify/rate-limit (the devDependency), to show
//    what the incumbent scores on it in the same setup.
// 4. An app written against rate-limiter-flexible's types.d.ts (packages/flexible/type-tests/app.ts) compiles
//    as is against rate-limiter-flexible 11.4.0 (so it is valid rlf code), then with its 'rate-limiter-flexible'
//    specifiers changed to '@ratekit/flexible' and nothing else, under node16 (as .cts and .mts) and bundler;
//    and rlf's deep paths (`@ratekit/flexible/lib/<Name>(.js)`, packages/flexible/type-tests/deep-paths.*),
//    which rlf itself does not type.
// Exits 1 on any compile error or failed assertion.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unpackFromNpm } from './lib/npm-tarball.mjs';

const FASTIFY_RATE_LIMIT = '11.2.0';
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const control = args.includes('--control');
const subject = control ? '@fastify/rate-limit' : '@ratekit/fastify';
const tarballsArg = args.indexOf('--tarballs');
const packages = ['core', 'express', 'koa', 'fastify', 'fetch', 'hono', 'redis', 'flexible']; // flexible depends on redis (its script transport)
const adapters = ['express', 'koa', 'fastify', 'fetch', 'hono'];

/** What the probes and the upstream test import besides ours, linked from where the workspace installed it. */
const linked = {
  typescript: '.',
  tstyche: '.',
  '@types/node': '.',
  express: 'packages/express',
  '@types/express': 'packages/express',
  'express-rate-limit': 'packages/express', // its `Validations` type, which our MemoryStore's constructor takes
  koa: 'packages/koa',
  '@types/koa': 'packages/koa',
  ioredis: 'packages/fastify',
  fastify: 'packages/fastify',
  hono: 'packages/hono',
  '@upstash/redis': 'packages/hono', // the client RedisStore (hono-rate-limiter's) is typed against
  'rate-limiter-flexible': 'packages/flexible', // the incumbent the flexible app is first compiled against
};

const work = mkdtempSync(join(tmpdir(), 'ratekit-types-'));
let failed = 0;
try {
  const tarballs = tarballsArg === -1 ? packAll(join(work, 'tarballs')) : readdirSync(args[tarballsArg + 1]).map((f) => join(args[tarballsArg + 1], f));
  install(tarballs);
  if (control) link('@fastify/rate-limit', realpathSync(join(root, 'packages/fastify/node_modules/@fastify/rate-limit')));

  // 2. Our probes, both resolutions.
  const probes = join(work, 'probes');
  mkdirSync(probes);
  for (const adapter of adapters) cpSync(join(root, 'packages', adapter, 'type-tests'), join(probes, adapter), { recursive: true });
  writeFileSync(join(probes, 'package.json'), '{ "private": true }\n');
  for (const [name, module, resolution] of [
    ['node16', 'node16', 'node16'],
    ['bundler', 'preserve', 'bundler'],
  ]) {
    writeTsconfig(join(probes, `tsconfig.${name}.json`), module, resolution, ['**/*.cts', '**/*.mts']);
    if (!control) failed += step(`probes (${name})`, process.execPath, [join(work, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`], probes);
  }

  // 3. @fastify/rate-limit's own type test, specifier changed, both resolutions.
  const upstream = fetchUpstreamTypeTest();
  // Under node16 the file compiles as CommonJS, as in @fastify/rate-limit's own (CommonJS) package. Not
  // as ESM: there its `new IORedis()` (ioredis's default import) fails for @fastify/rate-limit too (TS2351).
  const variants = [
    ['node16', 'node16', 'node16', 'commonjs'],
    ['bundler', 'preserve', 'bundler', 'commonjs'],
  ];
  for (const [name, module, resolution, type] of variants) {
    const dir = join(work, `fastify-tst-${name.replace(/\W+/g, '-')}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), `{ "private": true, "type": "${type}" }\n`);
    writeFileSync(join(dir, 'index.tst.ts'), upstream);
    writeTsconfig(join(dir, 'tsconfig.json'), module, resolution, ['index.tst.ts']);
    writeFileSync(join(dir, 'tstyche.json'), '{ "testFileMatch": ["index.tst.ts"] }\n');
    failed += step(
      `@fastify/rate-limit ${FASTIFY_RATE_LIMIT} types/index.tst.ts against ${subject}, tstyche (${name})`,
      process.execPath,
      [join(work, 'node_modules/tstyche/dist/bin.js'), '--config', 'tstyche.json'],
      dir,
    );
  }

  // 4. An app typed against rate-limiter-flexible, compiled against it and then against @ratekit/flexible.
  if (!control) {
    const app = readFileSync(join(root, 'packages/flexible/type-tests/app.ts'), 'utf8');
    const ours = app.replaceAll("'rate-limiter-flexible'", "'@ratekit/flexible'");
    if (ours === app) fail("packages/flexible/type-tests/app.ts: no 'rate-limiter-flexible' import to change");
    for (const [subjectName, source] of [
      ['rate-limiter-flexible 11.4.0', app],
      ['@ratekit/flexible', ours],
    ]) {
      const dir = join(work, `flexible-app-${subjectName.replace(/\W+/g, '-')}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
      for (const extension of ['cts', 'mts', 'ts']) writeFileSync(join(dir, `app.${extension}`), source);
      writeTsconfig(join(dir, 'tsconfig.node16.json'), 'node16', 'node16', ['app.cts', 'app.mts']);
      writeTsconfig(join(dir, 'tsconfig.bundler.json'), 'preserve', 'bundler', ['app.ts']);
      for (const name of ['node16', 'bundler']) {
        failed += step(
          `an app typed against rate-limiter-flexible, against ${subjectName} (${name})`,
          process.execPath,
          [join(work, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`],
          dir,
        );
      }
    }
    const deep = join(work, 'flexible-deep-paths');
    mkdirSync(deep);
    writeFileSync(join(deep, 'package.json'), '{ "private": true }\n');
    for (const file of ['deep-paths.cts', 'deep-paths.mts']) cpSync(join(root, 'packages/flexible/type-tests', file), join(deep, file));
    writeTsconfig(join(deep, 'tsconfig.node16.json'), 'node16', 'node16', ['deep-paths.cts', 'deep-paths.mts']);
    writeTsconfig(join(deep, 'tsconfig.bundler.json'), 'preserve', 'bundler', ['deep-paths.cts', 'deep-paths.mts']);
    for (const name of ['node16', 'bundler']) {
      failed += step(`@ratekit/flexible's deep paths lib/<Name>(.js) (${name})`, process.execPath, [join(work, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`], deep);
    }
  }
} finally {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
if (failed > 0) {
  console.error(`✖ type tests: ${failed} step(s) failed`);
  process.exit(1);
}
console.log('✔ type tests: every step passed');

function packAll(destination) {
  mkdirSync(destination);
  // pnpm (as `pnpm test` runs this) turns `workspace:^` into versions, as publishing does.
  const pnpm = spawnSync('pnpm', ['--version']).status === 0 ? ['pnpm'] : ['npx', '--yes', 'pnpm@9.15.9'];
  return packages.map((name) => {
    const packed = spawnSync(pnpm[0], [...pnpm.slice(1), 'pack', '--pack-destination', destination], { cwd: join(root, 'packages', name), encoding: 'utf8' });
    if (packed.status !== 0) fail(`pnpm pack (packages/${name}) failed:\n${packed.stderr}${packed.stdout}`);
    return join(destination, packed.stdout.trim().split('\n').pop().split('/').pop());
  });
}

/** Unpacks each tarball where `npm install` puts it, and links the third-party packages. */
function install(tarballs) {
  const modules = join(work, 'node_modules');
  for (const tarball of tarballs) {
    const scratch = mkdtempSync(join(work, 'unpack-'));
    run('tar', ['-xzf', tarball, '-C', scratch]);
    const { name } = JSON.parse(readFileSync(join(scratch, 'package', 'package.json'), 'utf8'));
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    cpSync(join(scratch, 'package'), join(modules, name), { recursive: true });
    rmSync(scratch, { recursive: true, force: true });
  }
  for (const [name, from] of Object.entries(linked)) link(name, realpathSync(resolve(root, from, 'node_modules', name)));
  // pino: Fastify's logger, which the upstream test imports; taken beside the Fastify it comes with.
  link('pino', join(dirname(realpathSync(join(modules, 'fastify'))), 'pino'));
}

function link(name, target) {
  const at = join(work, 'node_modules', name);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}

function writeTsconfig(file, module, moduleResolution, include) {
  const compilerOptions = { strict: true, skipLibCheck: false, noEmit: true, target: 'ES2022', module, moduleResolution, esModuleInterop: true, types: ['node'] };
  writeFileSync(file, `${JSON.stringify({ compilerOptions, include }, null, 2)}\n`);
}

/** `types/index.tst.ts` from @fastify/rate-limit's npm tarball, with `from '..'` now naming the subject. */
function fetchUpstreamTypeTest() {
  const dir = join(work, 'upstream');
  mkdirSync(dir);
  unpackFromNpm(`@fastify/rate-limit@${FASTIFY_RATE_LIMIT}`, dir);
  const source = readFileSync(join(dir, 'package', 'types', 'index.tst.ts'), 'utf8');
  const changed = source.replace(/^\} from '\.\.'$/m, `} from '${subject}'`);
  if (changed === source) fail("index.tst.ts: the import from '..' was not found (has the file changed?)");
  return changed;
}

/** Runs one check, prints its output, and returns 1 when it failed. */
function step(name, command, commandArgs, cwd) {
  console.log(`\n▶ ${name}`);
  const started = Date.now();
  const result = spawnSync(command, commandArgs, { cwd, encoding: 'utf8' });
  const output = `${result.stdout}${result.stderr}`.trim();
  if (output !== '') console.log(output);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status === 0) {
    console.log(`✔ ${name} (${seconds} s)`);
    return 0;
  }
  const errors = (output.match(/error TS\d+/g) ?? []).length;
  console.error(`✖ ${name}: exit ${result.status}${errors > 0 ? `, ${errors} tsc error(s)` : ''} (${seconds} s)`);
  return 1;
}

function run(command, commandArgs) {
  const result = spawnSync(command, commandArgs, { encoding: 'utf8' });
  if (result.status !== 0) fail(`${command} ${commandArgs.join(' ')} failed:\n${result.stderr}`);
}

function fail(message) {
  console.error(`✖ type tests: ${message}`);
  if (!keep) rmSync(work, { recursive: true, force: true });
  process.exit(1);
}
