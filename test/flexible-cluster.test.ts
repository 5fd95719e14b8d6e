import { forkTypeScript } from './fork-typescript';
import { CALLS, POINTS, WORKERS } from './flexible-cluster.primary';

/**
 * @ratekit/flexible's RateLimiterCluster over real node:cluster IPC: a
 * primary process with a RateLimiterClusterMaster and 3 forked workers, each
 * consuming 7 times from one key of a limiter of 10 points. Exactly 10 are
 * admitted, whichever package runs each side: the messages are
 * rate-limiter-flexible's, so an rlf master serves our workers and ours
 * serves rlf's.
 */
/** Not a timing bound, a hang guard: four processes start through tsx, 5 s or more each on a loaded machine, 40 s for a cold tsx cache. */
const HANG_GUARD_MS = 180_000;

function runCluster(master: 'ours' | 'rlf', worker: 'ours' | 'rlf'): Promise<{ admitted: number; refused: number; errors: string[] }> {
  return new Promise((resolve, reject) => {
    const primary = forkTypeScript('flexible-cluster.primary.ts', { ...process.env, MASTER: master, WORKER: worker });
    primary.once('message', (sums: { admitted: number; refused: number; errors: string[] }) => {
      resolve(sums);
      primary.kill();
    });
    primary.once('exit', (code) => reject(new Error(`the primary exited with code ${code} before it reported`)));
  });
}

describe('RateLimiterCluster over node:cluster IPC', () => {
  it.each([
    ['ours', 'ours'],
    ['rlf', 'ours'],
    ['ours', 'rlf'],
  ] as const)(
    'master %s, workers %s: counts every worker exactly once',
    async (master, worker) => {
      expect(await runCluster(master, worker)).toEqual({ admitted: POINTS, refused: WORKERS * CALLS - POINTS, errors: [] });
    },
    HANG_GUARD_MS,
  );
});
