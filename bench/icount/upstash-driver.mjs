// The driver of bench/icount/upstash.sh: on the redis-server at port <port>, 300 iterations of 16 decisions
// in flight on 16 keys (each iteration one batch), limits never reached, then SHUTDOWN NOSAVE.
//   node bench/icount/upstash-driver.mjs <port> <upstash|redis|ping> <fixed-window|sliding-window|token-bucket>
// ROOT names the checkout whose built packages decide (default: this one), for a build of another commit.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { upstashAlgorithm } from '../lib/upstash-algorithms.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = process.env.ROOT ?? join(here, '..', '..');
const { Redis } = createRequire(join(here, '..', 'package.json'))('ioredis');
const entry = (name) => pathToFileURL(join(root, 'packages', name, 'dist', 'index.js')).href;
const [port, who, algorithm] = process.argv.slice(2);
const ITERATIONS = 300;
const IN_FLIGHT = 16;

// No reconnecting: the run ends with SHUTDOWN, after which a reconnect would only print errors.
const client = new Redis({ port: Number(port), retryStrategy: () => null });
let decide;
if (who === 'upstash') {
  const { Ratelimit } = await import(entry('upstash'));
  const limiter = upstashAlgorithm(algorithm).upstash(Ratelimit);
  const ratelimit = new Ratelimit({ redis: client, limiter, prefix: 'icount', ephemeralCache: false });
  decide = async (id) => (await ratelimit.limit(id)).success;
} else if (who === 'redis') {
  const { createLimiter } = await import(entry('core'));
  const { redisStore } = await import(entry('redis'));
  const limiter = createLimiter({ limits: upstashAlgorithm(algorithm).core, store: redisStore({ client }), prefix: 'icount' });
  decide = async (id) => (await limiter.consume(id)).allowed;
} else {
  decide = async () => (await client.ping()) === 'PONG';
}
for (let i = 0; i < ITERATIONS; i++) {
  const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => decide(`key-${j}`)));
  if (answers.includes(false)) throw new Error('a decision was refused: the limit is never meant to be reached');
}
await client.call('SHUTDOWN', 'NOSAVE').catch(() => {});
client.disconnect();
