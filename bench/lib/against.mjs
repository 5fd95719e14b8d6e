// `pnpm bench --against <git ref>`: the ref, built in a worktree of its own, runs as a twin of each of our
// contenders in the same run, so every table shows "this commit ÷ that ref" beside the peers.
//
// - The worktree: bench/.against/<full sha> (git-ignored), made with `git worktree add --detach`, installed with
//   `pnpm install --frozen-lockfile --prefer-offline` and built with `pnpm build`; reused while it holds the
//   marker of a finished build.
// - A twin runs this checkout's bench code (the same app scripts, load and sandwich) on the ref's packages: its
//   process starts with `--import lib/against-register.mjs`, which resolves every `@ratekit/*` import from the
//   worktree's bench folder (lib/against-resolve.mjs). On Bun, which has no working resolve hook for bare
//   specifiers (a runtime plugin's onResolve never fires for them: oven-sh/bun#40579), a twin runs a copy of this
//   checkout's server scripts placed in the ref's bench folder (`twinScriptOnBun`), whose imports then resolve in
//   the ref's tree. In-process parts import the ref's built core by path.
// - A twin row's id is its row's id with `@ref`; it joins the same sandwich rounds as every other row.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER = fileURLToPath(new URL('./against-register.mjs', import.meta.url));

const PNPM = ['--yes', 'pnpm@9.15.9'];
/** The suffix of a twin row's id. */
export const TWIN = '@ref';

/**
 * The ref's worktree, built: made and built on first use, reused after.
 * @returns {{ ref: string, sha: string, short: string, root: string }}
 * @throws {Error} when the ref names no commit, or its install or build fails (the command's output is on stderr)
 */
export function prepareAgainst(ref, log) {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const short = sha.slice(0, 7);
  const root = join(ROOT, 'bench', '.against', sha);
  const marker = join(root, '.ratekit-bench-built');
  if (!existsSync(marker)) {
    if (!existsSync(root)) {
      mkdirSync(join(ROOT, 'bench', '.against'), { recursive: true });
      log(`--against ${ref}: git worktree add ${root} (${short})`);
      execFileSync('git', ['worktree', 'add', '--detach', root, sha], { cwd: ROOT, stdio: ['ignore', process.stderr, process.stderr] });
    }
    log(`--against ${ref}: pnpm install and pnpm build in the worktree (once per commit)`);
    const run = (args) => execFileSync('npx', [...PNPM, ...args], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
    run(['install', '--frozen-lockfile', '--prefer-offline']);
    run(['build']);
    writeFileSync(marker, `${sha}\n`);
  }
  return { ref, sha, short, root };
}

/** The execArgv and environment that make a Node child process a twin on `against`'s packages. */
export function twinProcess(against, { execArgv = [], env = process.env } = {}) {
  return { execArgv: [...execArgv, '--import', pathToFileURL(REGISTER).href], env: { ...env, BENCH_AGAINST_ROOT: against.root } };
}

/** The folders a server script may import from, relative to bench/ (copied whole, so relative imports hold). */
const SCRIPT_FOLDERS = ['http-servers', 'lib'];
const copiedFor = new Set();

/**
 * A twin's server script on Bun: this checkout's `script` (a file under bench/), copied with its sibling folders
 * into `<ref>/bench/.twin-scripts/` once per run, so its imports resolve from the ref's bench folder: the
 * `@ratekit/*` packages are the ref's (every other package too, at the ref's lockfile, which the A/B assumes equal).
 * @returns the copy's path
 */
export function twinScriptOnBun(against, script) {
  const bench = join(ROOT, 'bench');
  const copy = join(against.root, 'bench', '.twin-scripts');
  if (!copiedFor.has(copy)) {
    rmSync(copy, { recursive: true, force: true });
    for (const folder of SCRIPT_FOLDERS) cpSync(join(bench, folder), join(copy, folder), { recursive: true });
    copiedFor.add(copy);
  }
  const path = relative(bench, script);
  if (path.startsWith('..') || !SCRIPT_FOLDERS.includes(path.split(sep)[0])) throw new Error(`twinScriptOnBun: ${script} is not in bench/${SCRIPT_FOLDERS.join(' or bench/')}`);
  return join(copy, path);
}

/** The URL of one of the ref's built package entries, for the in-process parts (`core` → packages/core/dist/index.js). */
export function againstPackageUrl(against, name) {
  return pathToFileURL(join(against.root, 'packages', name, 'dist', 'index.js')).href;
}

/** A row id's twin, and back. */
export const twinOf = (id) => `${id}${TWIN}`;
export const isTwin = (id) => id.endsWith(TWIN);
export const untwinned = (id) => (isTwin(id) ? id.slice(0, -TWIN.length) : id);
