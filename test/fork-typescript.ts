import { type ChildProcess, fork } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Forks a TypeScript module of this folder as a child process with an IPC
 * channel, run through tsx, which maps @ratekit/* to the sources with the root
 * tsconfig.json paths (as jest does): no build step, and no stale dist/ can be
 * tested by mistake. Its stdout and stderr go to the test's.
 */
export function forkTypeScript(file: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return fork(join(__dirname, file), [], {
    execArgv: ['--import', pathToFileURL(require.resolve('tsx')).href],
    env: { ...env, TSX_TSCONFIG_PATH: join(resolve(__dirname, '..'), 'tsconfig.json') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}
