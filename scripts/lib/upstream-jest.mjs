// What the runners of incumbents' own jest suites share (packages/express/upstream/run.mjs and
// slow-down.mjs, packages/nestjs/upstream/run.mjs): a jest run over fetched test files with a generated
// config, and the report that compares its failures with a differences file.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { fail } from './throwaway-redis.mjs';

/**
 * Runs jest once over `config` (written to `work`), every file in one process (-w 1), from
 * `config.rootDir`, and returns one `{ name, ok, message }` per test that ran, named
 * `<file relative to testRoot>: <full name>`; a file that did not load is one failed entry.
 * `jestBin` is the repository's jest unless given (a suite may need its own major); `extraArgs` go
 * to jest before the filter; the run is stopped after `timeoutMs`.
 */
export function runJest({ repoDir, work, config, testRoot, filter, keep, jestBin = join(repoDir, 'node_modules', 'jest', 'bin', 'jest.js'), extraArgs = [], timeoutMs = 300_000 }) {
  const configPath = join(work, 'jest.config.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const resultsPath = join(work, 'results.json');
  const run = spawnSync(process.execPath, [jestBin, '--config', configPath, '-w', '1', ...extraArgs, '--json', '--outputFile', resultsPath, ...(filter === undefined ? [] : [filter])], {
    cwd: config.rootDir,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: timeoutMs,
  });
  if (!existsSync(resultsPath)) fail(`jest produced no results:\n${run.stderr}`);
  const report = JSON.parse(readFileSync(resultsPath, 'utf8'));
  if (!keep) rmSync(work, { recursive: true, force: true });
  return report.testResults.flatMap((file) => {
    const name = file.name.slice(testRoot.length + 1);
    if (file.assertionResults.length === 0) return [{ name: `${name}: (the file did not load) ${firstLine(file.message)}`, ok: false }];
    return file.assertionResults.filter((t) => t.status !== 'pending').map((t) => ({ name: `${name}: ${t.fullName}`, ok: t.status === 'passed', message: firstLine(t.failureMessages?.[0]) }));
  });
}

/**
 * Prints the counts and every failure, each with its entry in `differences` (name → why: the reason,
 * or `{ reason, mayPass: true }` for a failure that depends on the machine, not on the subject). Unless
 * `control` (a run that only reports), exits 1 when a test fails that `differences` does not list, or
 * a listed one passes without `mayPass` (the list must stay true; not checked when a filter ran part of
 * the suite). `differencesFile` names the list in that message.
 */
export function reportAgainst({ title, results, differences, control, filtered, documentedIn, differencesFile = 'the differences' }) {
  const failed = results.filter((r) => !r.ok);
  console.log(`\n${title}: ${results.length - failed.length} passed, ${failed.length} failed, of ${results.length}`);
  let unexpected = 0;
  for (const r of failed) {
    const reason = control ? undefined : reasonOf(differences[r.name]);
    if (!control && reason === undefined) unexpected++;
    const note = control ? '' : reason === undefined ? '   <- NOT a documented difference' : `   (documented: ${reason})`;
    console.log(`  ✖ ${r.name}${note}${r.message ? `\n      ${r.message}` : ''}`);
  }
  if (control) return;
  const stale = filtered ? [] : Object.keys(differences).filter((name) => differences[name]?.mayPass !== true && !failed.some((r) => r.name === name));
  for (const name of stale) console.log(`  ! listed in ${differencesFile} but did not fail: ${name}`);
  if (unexpected > 0 || stale.length > 0) {
    console.error(`✖ ${unexpected} undocumented failure(s), ${stale.length} stale difference(s)`);
    process.exit(1);
  }
  console.log(failed.length === 0 ? '✔ every test passed' : `✔ every failure is a documented difference (${documentedIn})`);
}

/** Writes `body` to `work/file` and returns its path: a module the generated config maps an import to. */
export function shim(work, file, body) {
  const path = join(work, file);
  writeFileSync(path, body);
  return path;
}

/** A package the test files import, wherever pnpm put it (it may not be hoisted). */
export function resolveAnywhere(name, packageDir, repoDir) {
  for (const base of [packageDir, repoDir]) {
    try {
      return createRequire(join(base, 'package.json')).resolve(name);
    } catch {
      // not resolvable from this base: try the next, then pnpm's store
    }
  }
  const store = join(repoDir, 'node_modules', '.pnpm');
  const dir = existsSync(store) ? readdirSync(store).find((d) => d.startsWith(`${name.replace('/', '+')}@`)) : undefined;
  if (dir === undefined) fail(`${name} is not installed`);
  return createRequire(join(store, dir, 'node_modules', name, 'package.json')).resolve(name);
}

/** The repository's own transform: @swc/jest, TypeScript to CommonJS. */
export function swcTransform(repoDir) {
  const swcJest = createRequire(join(repoDir, 'package.json')).resolve('@swc/jest');
  return { '^.+\\.(t|j)sx?$': [swcJest, { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] };
}

/** A differences entry's reason: the entry itself, or its `reason`. */
function reasonOf(entry) {
  return typeof entry === 'object' && entry !== null ? entry.reason : entry;
}

/** The first non-blank line of a jest message, without its colours, at most 240 characters. */
function firstLine(text) {
  if (typeof text !== 'string') return '';
  return (
    stripVTControlCharacters(text)
      .split('\n')
      .find((line) => line.trim() !== '') ?? ''
  )
    .trim()
    .slice(0, 240);
}
