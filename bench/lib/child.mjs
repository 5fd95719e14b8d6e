// A child process driven by request/reply messages over IPC. Every contender
// runs in its own child (a fresh V8: no shared JIT feedback, heap or GC state),
// and only one child works at a time while the others wait for a message.

import { fork } from 'node:child_process';

/**
 * Forks `modulePath` with an IPC channel. The child's stdout and stderr go to
 * our stderr, so `--json` output on stdout stays clean. `execPath` runs it
 * under another program (`valgrind`, for bench/icount/http.mjs), which then
 * takes `execArgv` and must start Node itself. `env`: the child's environment (default ours).
 *
 * @returns {{ request: (message: object) => Promise<object>, close: () => Promise<void>, pid: number }}
 *   `request` sends one message and resolves with the child's next reply; a
 *   reply `{ type: 'error', message }`, or the child exiting, rejects it.
 */
export function startChild(modulePath, { args = [], execArgv = [], execPath = process.execPath, env = process.env, label = modulePath } = {}) {
  const child = fork(modulePath, args, { execPath, execArgv, env, stdio: ['ignore', process.stderr, process.stderr, 'ipc'], serialization: 'json' });
  let pending;
  let exited = false;
  const exitedPromise = new Promise((resolve) => child.once('exit', resolve));
  child.on('message', (message) => {
    const waiter = pending;
    pending = undefined;
    if (waiter === undefined) return;
    if (message?.type === 'error') waiter.reject(new Error(`${label}: ${message.message}`));
    else waiter.resolve(message);
  });
  child.once('exit', (code, signal) => {
    exited = true;
    pending?.reject(new Error(`${label}: child exited (code ${code}, signal ${signal}) before replying`));
    pending = undefined;
  });
  return {
    pid: child.pid,
    request(message) {
      if (exited) return Promise.reject(new Error(`${label}: child has exited`));
      if (pending !== undefined) return Promise.reject(new Error(`${label}: a request is already pending`));
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(message);
      });
    },
    async close() {
      if (!exited) child.disconnect();
      await exitedPromise;
    },
  };
}

/**
 * The child side: calls `handle(message)` for each request and replies with
 * its result, or with `{ type: 'error' }` when it throws.
 */
export function serveParent(handle) {
  process.on('message', async (message) => {
    try {
      process.send(await handle(message));
    } catch (error) {
      process.send({ type: 'error', message: error?.stack ?? String(error) });
    }
  });
}
