// Redis server time per decision (INFO commandstats usec_per_call of fcall/evalsha), ratekit's
// store against rate-limiter-flexible's RateLimiterRedis and a trivial EVALSHA, on ioredis and
// node-redis, 50 decisions in flight on one connection, one key. Needs a built @ratekit/core and
// @ratekit/redis (dist) and a Redis on REDIS_URL (default redis://127.0.0.1:6390).
//   node packages/redis/bench/server-time.mjs [--n=20000] [--rounds=3] [--clients=ioredis,node-redis] [--store=<dist/index.cjs>]
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../../bench/package.json', import.meta.url));
const { Redis } = require('ioredis');
const { createClient } = require('redis');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const { createLimiter } = require('@ratekit/core');
// --store=<path>: another build of @ratekit/redis (e.g. an earlier commit's dist), for before/after runs.
const storePath = process.argv.find((a) => a.startsWith('--store='))?.slice(8);
const { redisStore } = storePath ? createRequire(import.meta.url)(new URL(storePath, `file://${process.cwd()}/`).pathname) : require('@ratekit/redis');

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const N = Number(arg('n', 20000));
const ROUNDS = Number(arg('rounds', 3));
const CLIENTS = arg('clients', 'ioredis,node-redis').split(',');
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390';
const INFLIGHT = 50;

const admin = new Redis(url);
const HOUR = 3_600_000;
const policies = {
  gcra: [{ algorithm: 'gcra', limit: 1e9, windowMs: HOUR }],
  // T = 1 ms, tau = 3.6e6 ms (whole ms: the expiry layout on the server clock); not reached in a run.
  'gcra T=1ms': [{ algorithm: 'gcra', limit: 3.6e6, windowMs: HOUR }],
  'fixed-window': [{ algorithm: 'fixed-window', limit: 1e9, windowMs: HOUR }],
  'token-bucket': [{ algorithm: 'token-bucket', limit: 1e9, windowMs: HOUR }],
  'sliding-window': [{ algorithm: 'sliding-window', limit: 1e9, windowMs: HOUR }],
  // Two unnamed limits that both take the expiry layout (T = 1 ms and a fixed window), not reached in a run.
  'gcra T=1ms + fixed-window': [
    { algorithm: 'gcra', limit: 3.6e6, windowMs: HOUR },
    { algorithm: 'fixed-window', limit: 1e9, windowMs: HOUR },
  ],
  'two-limit': [
    { algorithm: 'gcra', limit: 1e6, windowMs: 1000 },
    { algorithm: 'fixed-window', limit: 1e9, windowMs: HOUR },
  ],
};

async function commandStats() {
  const text = await admin.info('commandstats');
  const out = {};
  for (const m of text.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) out[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  return out;
}

async function run(fn) {
  let i = 0;
  const worker = async () => {
    while (i < N) {
      i++;
      await fn();
    }
  };
  // warm up
  for (let w = 0; w < 200; w++) await fn();
  await admin.config('RESETSTAT');
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const stats = await commandStats();
  let calls = 0,
    usec = 0;
  for (const name of ['fcall', 'evalsha', 'eval'])
    if (stats[name]) {
      calls += stats[name].calls;
      usec += stats[name].usec;
    }
  return { perSec: N / s, usecPerCall: usec / calls, calls };
}

async function connect(kind) {
  if (kind === 'ioredis') {
    const c = new Redis(url);
    await new Promise((r) => c.once('ready', r));
    return c;
  }
  const c = createClient({ url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

const TRIVIAL = "return redis.call('INCR', KEYS[1])";
const results = {};
const record = (name, r) => (results[name] ??= []).push(r);
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of CLIENTS) {
    const client = await connect(kind);
    const sha = await admin.script('LOAD', TRIVIAL);
    const trivial = kind === 'ioredis' ? () => client.evalsha(sha, 1, 'bench:trivial') : () => client.evalSha(sha, { keys: ['bench:trivial'], arguments: [] });
    const contenders = [['trivial', trivial]];
    for (const [name, limits] of Object.entries(policies)) {
      // coalesce: false, so usec_per_call is one decision's (coalescing: bench/notes/coalescing.md).
      const limiter = createLimiter({ limits, store: redisStore({ client, coalesce: false }), prefix: `b${name}` });
      contenders.push([`ratekit ${name}`, () => limiter.consume('k')]);
    }
    const rlf = new RateLimiterRedis({ storeClient: client, useRedisPackage: kind !== 'ioredis', points: 1e9, duration: 3600, keyPrefix: 'rlf' });
    contenders.push(['rlf', () => rlf.consume('k')]);
    for (const [name, fn] of contenders) {
      const base = await run(trivial);
      const r = await run(fn);
      record(`${kind} ${name}`, { ...r, ratio: r.perSec / base.perSec });
    }
    kind === 'ioredis' ? client.disconnect() : await client.quit();
  }
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`n=${N} rounds=${ROUNDS} in flight=${INFLIGHT}; median (min–max) over rounds`);
console.log('contender'.padEnd(32), 'usec_per_call'.padEnd(22), 'ratio to trivial (adjacent)'.padEnd(28), 'decisions/s');
for (const [name, rs] of Object.entries(results)) {
  const u = rs.map((r) => r.usecPerCall),
    q = rs.map((r) => r.ratio),
    p = rs.map((r) => r.perSec);
  const f = (xs, d) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
  console.log(name.padEnd(32), f(u, 2).padEnd(22), f(q, 2).padEnd(28), f(p, 0));
}
admin.disconnect();
