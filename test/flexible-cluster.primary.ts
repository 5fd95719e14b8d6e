/**
 * The primary process of flexible-cluster.test.ts, and its workers (this same
 * file, forked by node:cluster): a real node:cluster application counting
 * through RateLimiterClusterMaster.
 *
 * MASTER and WORKER say whose classes each side uses: `ours`
 * (@ratekit/flexible, the TypeScript sources through tsx) or `rlf`
 * (rate-limiter-flexible 11.4.0, packages/flexible's devDependency). Each of
 * WORKERS workers consumes CALLS times in a row from one key of a limiter of
 * POINTS points per hour; the primary sends the sums to the test:
 * `{ admitted, refused, errors }`.
 */
import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ours from '@ratekit/flexible';

export const WORKERS = 3;
export const CALLS = 7;
export const POINTS = 10;

interface Side {
  RateLimiterClusterMaster: new () => unknown;
  RateLimiterCluster: new (opts: { keyPrefix: string; points: number; duration: number; timeoutMs?: number }) => { consume(key: string): Promise<unknown> };
}

const rlf = createRequire(join(__dirname, '..', 'packages', 'flexible', 'package.json'))('rate-limiter-flexible') as Side;
const side = (name: string | undefined): Side => (name === 'rlf' ? rlf : ours);

if (cluster.isPrimary) {
  new (side(process.env.MASTER).RateLimiterClusterMaster)();
  cluster.setupPrimary({ exec: __filename, execArgv: ['--import', pathToFileURL(require.resolve('tsx')).href] });
  const sums = { admitted: 0, refused: 0, errors: [] as string[] };
  let reported = 0;
  for (let i = 0; i < WORKERS; i += 1) {
    const worker = cluster.fork();
    worker.on('message', (message: { result?: { admitted: number; refused: number; errors: string[] } }) => {
      if (message.result === undefined) return;
      sums.admitted += message.result.admitted;
      sums.refused += message.result.refused;
      sums.errors.push(...message.result.errors);
      reported += 1;
      if (reported === WORKERS) {
        process.send?.(sums);
        for (const each of Object.values(cluster.workers ?? {})) each?.kill();
      }
    });
  }
} else {
  const limiter = new (side(process.env.WORKER).RateLimiterCluster)({ keyPrefix: 'flexible-cluster', points: POINTS, duration: 3600, timeoutMs: 10_000 });
  void (async () => {
    const result = { admitted: 0, refused: 0, errors: [] as string[] };
    for (let i = 0; i < CALLS; i += 1) {
      try {
        await limiter.consume('one key');
        result.admitted += 1;
      } catch (rejection) {
        if (rejection instanceof Error) result.errors.push(rejection.message);
        else result.refused += 1;
      }
    }
    process.send?.({ result });
  })();
}
