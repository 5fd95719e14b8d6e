// Redis CPU per @ratekit/upstash decision, this checkout's build against another's (a twin), taken from the server's
// own INFO cpu: both limiters on one redis-server, 8 rounds in turn (the order alternating), each 1,500 × 16
// decisions in flight on 16 keys, limits never reached. The paired rounds show a Redis-side change that the
// shared machine's noise hides in the bench's decisions per second. Pin the two to separate cores:
//   taskset -c 1 redis-server --port 6399 --save '' --appendonly no --daemonize yes
//   taskset -c 0 node bench/icount/redis-cpu.mjs 6399 <fixed-window|sliding-window|token-bucket> bench/.against/<sha>
//   redis-cli -p 6399 shutdown nosave
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, summary } from '../lib/stats.mjs';
import { upstashAlgorithm } from '../lib/upstash-algorithms.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const { Redis } = createRequire(join(here, '..', 'package.json'))('ioredis');
const [port, algorithm, twinRoot] = process.argv.slice(2);
if (twinRoot === undefined) throw new Error('usage: node bench/icount/redis-cpu.mjs <port> <algorithm> <twin checkout>');
const ROUNDS = 8;
const ITERATIONS = 1_500;
const IN_FLIGHT = 16;

const client = new Redis({ port: Number(port) });
const admin = new Redis({ port: Number(port) });
const limiters = {};
for (const [who, root] of [
  ['ours', join(here, '..', '..')],
  ['twin', resolve(twinRoot)],
]) {
  const { Ratelimit } = await import(pathToFileURL(join(root, 'packages', 'upstash', 'dist', 'index.js')).href);
  const limiter = upstashAlgorithm(algorithm).upstash(Ratelimit);
  limiters[who] = new Ratelimit({ redis: client, limiter, prefix: `redis-cpu-${who}`, ephemeralCache: false });
}
const cpuSeconds = async () => {
  const info = await admin.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
};
const perDecision = { ours: [], twin: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const who of round % 2 === 0 ? ['twin', 'ours'] : ['ours', 'twin']) {
    const before = await cpuSeconds();
    for (let i = 0; i < ITERATIONS; i++) {
      const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => limiters[who].limit(`key-${j}`)));
      if (answers.some((answer) => !answer.success)) throw new Error('a decision was refused: the limit is never meant to be reached');
    }
    perDecision[who].push((((await cpuSeconds()) - before) * 1e6) / (ITERATIONS * IN_FLIGHT));
  }
}
const ratios = perDecision.ours.map((ours, i) => ours / perDecision.twin[i]);
const lower = ratios.filter((ratio) => ratio < 1).length;
const ratio = summary(ratios);
console.log(`${algorithm}: Redis CPU µs per decision, ours ${perDecision.ours.map((x) => x.toFixed(2)).join(' ')} (median ${median(perDecision.ours).toFixed(2)})`);
console.log(`${algorithm}: the twin's ${perDecision.twin.map((x) => x.toFixed(2)).join(' ')} (median ${median(perDecision.twin).toFixed(2)})`);
console.log(`${algorithm}: ours ÷ twin per round, median ${ratio.median.toFixed(3)} [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]; ours lower in ${lower} of ${ROUNDS}`);
client.disconnect();
admin.disconnect();
