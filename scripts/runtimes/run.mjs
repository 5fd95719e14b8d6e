#!/usr/bin/env node
// The runtime matrix (issue 33): the runtime tests of every package, bundled from the BUILT packages, on Bun,
// Deno and workerd. Node 20 and 24 are the two jest runs of `pnpm test` in CI (.ci/run), which already run every
// `*.runtime.test.ts`; this script does not run Node again.
//
//   node scripts/runtimes/run.mjs [--runtimes=bun,deno,workerd] [--keep] [path-filter…]
//   (RATEKIT_BUN_BIN, RATEKIT_DENO_BIN, RATEKIT_WORKERD_BIN: another binary; --keep: leave the bundles and workerd configs in .tmp/runtimes/run-*; they are kept anyway when something fails)
//
// Which files run where (packages/*/src/**):
//   x.runtime.test.ts  → Bun, Deno, workerd (and jest on Node)
//   x.bun.test.ts      → Bun only;  x.deno.test.ts → Deno only (--unstable-kv);  x.workerd.test.ts → workerd only
//   x.edge.test.ts     → Bun, Deno, workerd, with the servers of services.mjs (Upstash REST before a real Redis);
//                        jest leaves them (on Node, the store's own jest test starts the same servers)
// On workerd, everything runs twice: on a compatibility date before 2026-02 (where setInterval returns a number)
// and on a recent one, both with nodejs_compat; and the Workers of scripts/runtimes/workers/, which make a limiter
// (memory store or Durable Objects), the Fetch API function or a Hono app at module scope, must start and then limit.
//
// What runs is what users get: each `@ratekit/*` import resolves through its package's `exports` to the built file
// (conditions per runtime). Bun and Deno load that file as it is, and resolve its dependencies themselves; on
// workerd it is bundled as Worker bundlers do it, every `node:*` module external, so a bare Node built-in (a stripped
// `node:` prefix) fails the bundle and a Node API workerd lacks fails the run. The test files are bundled from their
// TypeScript.
//
// A runtime whose binary cannot be had is skipped with one line, except in CI (`CI` set), where it fails.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { RESULT_MARKER } from './runner.mjs';
import { startServices } from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const runnerPath = join(root, 'scripts/runtimes/runner.mjs');
const installPath = join(root, 'scripts/runtimes/install-globals.mjs');
const testUtilsRuntime = join(root, 'packages/test-utils/src/runtime.ts');
const ALL_RUNTIMES = ['bun', 'deno', 'workerd'];
/** workerd's compatibility dates: one before 2026-02 (numeric timer ids: `unref` is not there) and one recent. */
const WORKERD_DATES = ['2025-09-01', '2026-11-01'];
/** From this compatibility date on, nodejs_compat is on by default (and workerd warns when it is given). */
const NODEJS_COMPAT_DEFAULT_FROM = '2026-08-04';
/** Per runtime: its export conditions, as its bundlers and resolvers use them. */
const CONDITIONS = { bun: ['bun', 'node', 'import'], deno: ['deno', 'node', 'import'], workerd: ['workerd', 'worker', 'browser', 'import'] };
const inCI = (() => {
  const value = process.env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
})();

// ---- arguments ------------------------------------------------------------------------------------------------
let runtimes = ALL_RUNTIMES;
let keep = false;
const filters = [];
for (const arg of process.argv.slice(2)) {
  if (arg === '--keep') keep = true;
  else if (arg.startsWith('--runtimes=')) runtimes = arg.slice('--runtimes='.length).split(',').filter(Boolean);
  else filters.push(arg);
}
for (const runtime of runtimes) if (!ALL_RUNTIMES.includes(runtime)) fail(`unknown runtime ${runtime} (expected some of ${ALL_RUNTIMES.join(', ')})`);

// ---- the test files -------------------------------------------------------------------------------------------
function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}
const testFiles = readdirSync(join(root, 'packages'))
  .flatMap((pkg) => walk(join(root, 'packages', pkg, 'src')))
  .map((path) => relative(root, path))
  .filter((path) => /\.(runtime|edge|bun|deno|workerd)\.test\.ts$/.test(path))
  .filter((path) => filters.length === 0 || filters.some((filter) => path.includes(filter)))
  .sort();
const shared = testFiles.filter((path) => path.endsWith('.runtime.test.ts'));
const edge = testFiles.filter((path) => path.endsWith('.edge.test.ts'));
/** What the edge tests see (`upstashEndpoint()`), once services.mjs has started them. */
let matrix;
const only = (runtime) => testFiles.filter((path) => path.endsWith(`.${runtime}.test.ts`));

// ---- bundling -------------------------------------------------------------------------------------------------
/** @ratekit/test-utils → its runtime-safe subset (server starters are Node-only). */
const testUtilsPlugin = {
  name: 'ratekit-test-utils-runtime',
  setup(b) {
    b.onResolve({ filter: /^@ratekit\/test-utils$/ }, () => ({ path: testUtilsRuntime }));
  },
};

/**
 * Every `@ratekit/<name>[/subpath]` import resolves as a user's would: through packages/<name>'s `exports` to its
 * built file (a self-reference from the package's folder, whoever imports it). On Bun and Deno, users run the
 * published files as they are (no bundler), so the import is left to the runtime, as the absolute path of that
 * file: the runtime itself loads the dist and resolves its dependencies from node_modules. On workerd it is
 * bundled, as Worker bundlers do.
 */
function publishedPackagesPlugin(external) {
  return {
    name: 'ratekit-published-packages',
    setup(b) {
      b.onResolve({ filter: /^@ratekit\/[a-z-]+(\/.*)?$/ }, async (args) => {
        if (args.path === '@ratekit/test-utils' || args.pluginData?.inner) return undefined;
        const name = args.path.split('/')[1];
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: join(root, 'packages', name), pluginData: { inner: true } });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        return { path: resolved.path, external };
      });
    },
  };
}

async function bundle(runtime, entrySource, outfile, nodePaths = []) {
  const entry = join(dirname(outfile), `${basename(outfile)}.entry.mjs`);
  writeFileSync(entry, entrySource);
  try {
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      mainFields: ['module', 'main'],
      conditions: CONDITIONS[runtime],
      external: ['node:*', 'cloudflare:*', 'bun:*'],
      plugins: [testUtilsPlugin, publishedPackagesPlugin(runtime !== 'workerd')],
      // Third-party imports of the matrix's own Workers (module-scope checks) resolve from the package they exercise.
      nodePaths,
      logLevel: 'silent',
      absWorkingDir: root,
      // The root tsconfig.json maps @ratekit/* to the sources (for tsc and jest); the matrix must take the dists.
      tsconfigRaw: {},
    });
    return undefined;
  } catch (error) {
    const errors = error.errors ?? [{ text: String(error) }];
    const text = errors.map((e) => `${e.text}${e.location ? ` (${e.location.file}:${e.location.line})` : ''}`).join('\n');
    return /dist\//.test(text) ? `${text}\n(the bundles take the packages' dist/: \`pnpm build\` first)` : text;
  }
}

function basename(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The entry of a bundle: globals first (so static imports of test files register), then the files, lazily. */
function entryOf(files, { staticFile, tail }) {
  const lines = [`import ${JSON.stringify(installPath)};`, `import { runFiles } from ${JSON.stringify(runnerPath)};`];
  if (matrix) lines.push(`globalThis.__RATEKIT_MATRIX__ = ${JSON.stringify(matrix)};`);
  if (staticFile) lines.push(`export * from ${JSON.stringify(join(root, staticFile))};`);
  lines.push(
    `const files = [${files
      .map((file) => (file === staticFile ? `{ name: ${JSON.stringify(file)}, registered: true }` : `{ name: ${JSON.stringify(file)}, load: () => import(${JSON.stringify(join(root, file))}) }`))
      .join(', ')}];`,
    tail,
  );
  return lines.join('\n') + '\n';
}

/** For Bun and Deno: run, then exit (a leftover timer of a test must not keep the process). */
const PROCESS_TAIL = `const result = await runFiles(files, globalThis.__RATEKIT_LABEL__ ?? 'runtime');
const code = result.failed > 0 ? 1 : 0;
if (globalThis.Deno) globalThis.Deno.exit(code); else process.exit(code);`;
/** For workerd: the Worker's test() handler runs the files; the label comes from a text binding. */
const WORKER_TAIL = `export default {
  async test(controller, env) {
    const result = await runFiles(files, env.LABEL);
    if (result.failed > 0) throw new Error(result.failed + ' runtime test(s) failed');
  },
};`;

// ---- the runtimes ---------------------------------------------------------------------------------------------
/** The runtime's binary: RATEKIT_<NAME>_BIN when set (another version), else node_modules/.bin, else PATH. */
function findBinary(name) {
  const override = process.env[`RATEKIT_${name.toUpperCase()}_BIN`];
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name));
  const candidates = override ? [override] : [join(root, 'node_modules/.bin', name), ...onPath];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    // The npm packages install a placeholder when their platform binary is missing: ask it for its version.
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) return { path: candidate, version: probe.stdout.trim().split('\n')[0] };
  }
  return undefined;
}

/** How long one runtime's run may take before it is killed (the whole matrix takes well under a minute). */
const RUN_TIMEOUT_MS = 5 * 60_000;

/** Runs a command without blocking this process (the matrix's services answer from it); resolves its exit and output. */
function spawnAndCollect(command, args, options) {
  return new Promise((resolveRun) => {
    const chunks = [];
    let error;
    // In a process group of its own: the npm packages' launchers (node_modules/.bin/workerd) start the real binary
    // as a child, which a kill of the launcher alone would leave running.
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const watchdog = setTimeout(() => {
      error = new Error(`killed after ${RUN_TIMEOUT_MS / 1000} s`);
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, RUN_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (e) => (error = e));
    child.on('close', (status, signal) => {
      clearTimeout(watchdog);
      resolveRun({ status, signal, error, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** Runs a runtime; its output is shown (but for workerd's per-test debug lines), and the runner's result line is read from it. */
async function runAndRead(label, command, args, options = {}) {
  const started = Date.now();
  const child = await spawnAndCollect(command, args, options);
  const output = child.output;
  const results = output
    .split('\n')
    .filter((line) => line.includes(RESULT_MARKER))
    .map((line) => JSON.parse(line.slice(line.indexOf(RESULT_MARKER) + RESULT_MARKER.length)));
  const shown = output
    .split('\n')
    .filter((line) => !line.includes(RESULT_MARKER) && !/^workerd\/server\/server\/run\.rs:\d+: debug: \[ (TEST|PASS) \]/.test(line) && line.trim() !== '')
    .join('\n');
  if (shown) console.log(shown.replace(/^/gm, '  '));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (results.length === 0) {
    const why = child.error ? child.error.message : `exit ${child.status ?? child.signal}`;
    return { label, passed: 0, failed: 1, skipped: 0, failures: [{ title: '(the run)', message: `no results (${why})` }], seconds };
  }
  const merged = results.reduce((a, b) => ({ ...a, passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped, failures: [...a.failures, ...b.failures] }));
  if (child.status !== 0 && merged.failed === 0) merged.failures.push({ title: '(the run)', message: `exit ${child.status ?? child.signal} with no failing test` });
  return { ...merged, label, failed: Math.max(merged.failed, merged.failures.length), seconds };
}

function bundleFailure(label, message) {
  return { label, passed: 0, failed: 1, skipped: 0, failures: [{ title: '(bundling)', message }], seconds: '0.0' };
}

async function runProcessRuntime(runtime, binary) {
  const results = [];
  const dir = join(out, runtime);
  mkdirSync(dir, { recursive: true });
  for (const [name, files, label] of [
    ['shared', shared, runtime],
    ['edge', matrix ? edge : [], `${runtime} (edge stores)`],
    [runtime, only(runtime), `${runtime} (${runtime}-only files)`],
  ]) {
    if (files.length === 0) continue;
    const outfile = join(dir, `${name}.mjs`);
    const problem = await bundle(runtime, `globalThis.__RATEKIT_LABEL__ = ${JSON.stringify(label)};\n${entryOf(files, { tail: PROCESS_TAIL })}`, outfile);
    if (problem) {
      results.push(bundleFailure(label, problem));
      continue;
    }
    const args = runtime === 'deno' ? ['run', '--allow-all', '--unstable-kv', '--quiet', outfile] : ['run', outfile];
    results.push(await runAndRead(label, binary.path, args, { cwd: dir, env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' } }));
  }
  return results;
}

/** A capnp config of one Worker: its bundle, the compatibility date, a LABEL text binding, its Durable Objects. */
function workerdConfig(bundleFile, date, label, durableObjects) {
  const bindings = [
    `(name = "LABEL", text = ${JSON.stringify(label)})`,
    ...durableObjects.map(({ binding, className }) => `(name = ${JSON.stringify(binding)}, durableObjectNamespace = ${JSON.stringify(className)})`),
  ];
  const objects = durableObjects.map(({ className }) => `(className = ${JSON.stringify(className)}, uniqueKey = ${JSON.stringify(`ratekit-test-${className}`)})`);
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (services = [
  (name = "main", worker = .worker),
  # fetch() may reach the matrix's services on loopback (the default network allows public addresses only)
  (name = "internet", network = (allow = ["public", "private", "local"])),
]);
const worker :Workerd.Worker = (
  modules = [(name = "worker.mjs", esModule = embed ${JSON.stringify(basename(bundleFile))})],
  compatibilityDate = ${JSON.stringify(date)},
${date < NODEJS_COMPAT_DEFAULT_FROM ? '  compatibilityFlags = ["nodejs_compat"],\n' : ''}  bindings = [${bindings.join(', ')}],
${objects.length > 0 ? `  durableObjectNamespaces = [${objects.join(', ')}],\n  durableObjectStorage = (inMemory = void),\n` : ''});
`;
}

/** `// @workerd durable-object BINDING=ClassName` lines of a workerd-only test file or a module-scope Worker. */
function durableObjectsOf(file) {
  return [...readFileSync(join(root, file), 'utf8').matchAll(/^\/\/ @workerd durable-object ([A-Z_][A-Z0-9_]*)=([A-Za-z_$][\w$]*)\s*$/gm)].map((m) => ({ binding: m[1], className: m[2] }));
}

/**
 * The module-scope checks (scripts/runtimes/workers/*.mjs): Workers written as users write them, the limiter or
 * middleware made at the top level; each must start and then limit. A line `// @package <name>` names the package
 * exercised: its third-party imports resolve from its node_modules, and the check waits for the package to exist.
 */
const moduleScopeWorkers = readdirSync(join(root, 'scripts/runtimes/workers'))
  .filter((name) => name.endsWith('.mjs'))
  .sort()
  .map((name) => {
    const path = join(root, 'scripts/runtimes/workers', name);
    const pkg = /^\/\/ @package ([a-z-]+)$/m.exec(readFileSync(path, 'utf8'))?.[1];
    if (pkg === undefined) fail(`${relative(root, path)} has no \`// @package <name>\` line`);
    return { file: relative(root, path), pkg };
  });

async function runWorkerd(binary) {
  const results = [];
  const dir = join(out, 'workerd');
  mkdirSync(dir, { recursive: true });
  const workers = [];
  if (shared.length > 0) workers.push({ name: 'shared', source: entryOf(shared, { tail: WORKER_TAIL }), durableObjects: [], what: 'runtime tests' });
  if (matrix && edge.length > 0) workers.push({ name: 'edge', source: entryOf(edge, { tail: WORKER_TAIL }), durableObjects: [], what: 'edge stores' });
  for (const { file, pkg } of moduleScopeWorkers) {
    if (!existsSync(join(root, 'packages', pkg, 'package.json'))) continue;
    workers.push({
      name: `module-scope-${pkg}`,
      source: entryOf([file], { staticFile: file, tail: WORKER_TAIL }),
      durableObjects: durableObjectsOf(file),
      what: `@ratekit/${pkg} made at module scope`,
      nodePaths: [join(root, 'packages', pkg, 'node_modules')],
    });
  }
  for (const file of only('workerd')) {
    workers.push({
      name: basename(file).replace(/\.workerd\.test\.ts$/, '.workerd'),
      source: entryOf([file], { staticFile: file, tail: WORKER_TAIL }),
      durableObjects: durableObjectsOf(file),
      what: file,
    });
  }
  for (const worker of workers) {
    const outfile = join(dir, `${worker.name}.mjs`);
    const problem = await bundle('workerd', worker.source, outfile, worker.nodePaths);
    for (const date of WORKERD_DATES) {
      const label = `workerd ${date}: ${worker.what}`;
      if (problem) {
        results.push(bundleFailure(label, problem));
        continue;
      }
      const config = join(dir, `${worker.name}-${date}.capnp`);
      writeFileSync(config, workerdConfig(outfile, date, label, worker.durableObjects));
      results.push(await runAndRead(label, binary.path, ['test', config], { cwd: dir }));
    }
  }
  return results;
}

// ---- main -----------------------------------------------------------------------------------------------------
if (testFiles.length === 0 && filters.length > 0) fail(`no runtime test file matches ${filters.join(', ')}`);
// One folder per run (helpers and CI runs may overlap), kept when something failed, for a look at the bundles.
mkdirSync(join(root, '.tmp/runtimes'), { recursive: true });
const out = mkdtempSync(join(root, '.tmp/runtimes/run-'));
console.log(`runtime tests: ${shared.length} shared file(s) (${shared.join(', ') || 'none'}); edge and runtime-only: ${testFiles.filter((f) => !shared.includes(f)).join(', ') || 'none'}`);
console.log('Node 20/24: the jest runs of `pnpm test` run the *.runtime.test.ts files (CI runs `pnpm test` on each).');
const summary = [];
let failed = false;
let services;
if (edge.length > 0) {
  const started = await startServices(root, out).catch((error) => ({ error }));
  if (started.error) {
    console.error(`✖ the edge tests' servers failed to start: ${started.error.stack ?? started.error}`);
    summary.push('✖ edge tests: their servers failed to start');
    failed = true;
  } else if (started.missing) {
    const line = `the edge tests (${edge.join(', ')}): ${started.missing}`;
    if (inCI) {
      console.error(`✖ ${line}: required in CI`);
      summary.push('✖ edge tests: their servers cannot be started (required in CI)');
      failed = true;
    } else {
      console.log(`- skipped ${line}`);
      summary.push('- edge tests: skipped (their servers cannot be started)');
    }
  } else {
    services = started;
    matrix = started.matrix;
    console.log(`edge tests: ${started.note}`);
  }
}
for (const runtime of runtimes) {
  const binary = findBinary(runtime);
  if (binary === undefined) {
    const line = `${runtime}: no working binary (RATEKIT_${runtime.toUpperCase()}_BIN, node_modules/.bin/${runtime} or PATH; it comes from the npm package \`${runtime}\`)`;
    if (inCI) {
      console.error(`✖ ${line}: required in CI`);
      summary.push(`✖ ${runtime}: no binary (required in CI)`);
      failed = true;
    } else {
      console.log(`- skipped ${line}`);
      summary.push(`- ${runtime}: skipped (no binary)`);
    }
    continue;
  }
  console.log(`\n▶ ${runtime} ${binary.version}`);
  const results = runtime === 'workerd' ? await runWorkerd(binary) : await runProcessRuntime(runtime, binary);
  for (const result of results) {
    const mark = result.failed > 0 ? '✖' : '✔';
    const line = `${mark} ${result.label}: ${result.passed} passed, ${result.failed} failed${result.skipped ? `, ${result.skipped} skipped` : ''} (${result.seconds} s)`;
    console.log(line);
    summary.push(line);
    for (const failure of result.failures) console.log(`    ✖ ${failure.title}\n        ${failure.message.replace(/\n/g, '\n        ')}`);
    if (result.failed > 0) failed = true;
  }
}
await services?.stop();
console.log(`\nruntime matrix:\n${summary.map((line) => `  ${line}`).join('\n') || '  (nothing ran)'}`);
if (failed || keep) console.log(`bundles and workerd configs kept in ${relative(root, out)}`);
else rmSync(out, { recursive: true, force: true });
process.exit(failed ? 1 : 0);

function fail(message) {
  console.error(`runtime matrix: ${message}`);
  process.exit(1);
}
