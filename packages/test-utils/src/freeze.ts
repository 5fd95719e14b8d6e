import { readdirSync, readFileSync } from 'node:fs';

/**
 * Sends SIGSTOP to each of `pids` and resolves once every thread of each has
 * stopped, polling `/proc/<pid>/task/<tid>/stat` every 5 ms; rejects after
 * `timeoutMs`. `kill` only queues the signal: on a busy machine a server's
 * threads run on, and answer what reaches them, until they are next
 * scheduled, so a test that sends a request right after `kill` can still get
 * an answer (seen on 2 cores under load: two memcached replies within 2 ms
 * of the SIGSTOP). A process that exits meanwhile counts as stopped;
 * without `/proc` (not Linux) it resolves once the signals are sent.
 *
 * @throws whatever `process.kill` throws, e.g. `ESRCH` for a pid that is not running
 */
export async function freezeProcesses(pids: readonly number[], timeoutMs = 5_000): Promise<void> {
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  const deadline = Date.now() + timeoutMs;
  while (!pids.every(stopped)) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.join(', ')} not stopped within ${timeoutMs} ms of SIGSTOP`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Whether every thread of `pid` is stopped (state `T` or `t`), or the process is gone. */
function stopped(pid: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return tids.every((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // `<tid> (<comm>) <state> …`: comm may hold spaces and parentheses, so read after the last ')'.
      const state = stat[stat.lastIndexOf(')') + 2];
      return state === 'T' || state === 't';
    } catch {
      return true;
    }
  });
}
