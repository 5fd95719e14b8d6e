// Redis's cost per decision of a coalesced call against its floor (issue 26): the batch function
// (50 decisions of a fixed window in the expiry layout, consume 1, per FCALL; every argument sent,
// or the repeated ones as '' as the store sends them), a function doing only what those decisions
// must (INCR, PTTL and one string.format per key, 50 keys per FCALL), and the lone function with 50
// calls in flight. Per decision: commandstats usec inside the calls, and the Redis process's CPU
// (INFO cpu, user + sys). A redis-server of its own on a free loopback port; needs the built
// package (pnpm build). Run:
//   node packages/redis/bench/batch-floor.mjs [keys=10000] [calls=2000] [rounds=3]
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';

const require = createRequire(new URL('../../../bench/package.json', import.meta.url));
const { Redis } = require('ioredis');
const { DECISION_LIBRARY, DECISION_FUNCTION, DECISION_BATCH_FUNCTION } = require('@ratekit/redis');

const [KEYS, CALLS, ROUNDS] = [Number(process.argv[2] ?? 10_000), Number(process.argv[3] ?? 2_000), Number(process.argv[4] ?? 3)];
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = s.address();
    s.close(() => resolve(p));
  });
});
const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const client = new Redis({ port, retryStrategy: (n) => (n < 20 ? 50 : null) });
await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
await client.call('FUNCTION', 'LOAD', DECISION_LIBRARY);
await client.call(
  'FUNCTION',
  'LOAD',
  `#!lua name=floor
redis.register_function('floor', function(keys, args)
  local out = {}
  for i = 1, #keys do
    local n = redis.call('INCR', keys[i])
    local t = redis.call('PTTL', keys[i])
    if t < 0 then redis.call('PEXPIRE', keys[i], 3600000); t = 3600000 end
    out[i] = string.format('= 1 %d,%d', t - 3600000, n - 1)
  end
  return out
end)`,
);
// The store's argument for consume 1 of `{ limit: 1e9, windowMs: 3_600_000 }` (the expiry layout).
const id = 'fixed-window:1000000000:3600000:x';
const spec = `consume 1 - fixed-window 1000000000 3600000 ${id.length}~${id}`;
const keysFrom = (i) => Array.from({ length: 50 }, (_, j) => `bench:{k${(i * 50 + j) % KEYS}}`);
const cpuUs = async () => {
  const info = await client.info('cpu');
  return (Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1])) * 1e6;
};
async function measure(label, call, perCall) {
  await client.config('RESETSTAT');
  const before = await cpuUs();
  for (let i = 0; i < CALLS; i++) await call(i);
  const cpu = (await cpuUs()) - before;
  const [, calls, usec] = /cmdstat_fcall:calls=(\d+),usec=(\d+)/.exec(await client.info('commandstats'));
  const decisions = Number(calls) * perCall;
  console.log(`${label.padEnd(44)} ${(Number(usec) / decisions).toFixed(2).padStart(6)} µs inside  ${(cpu / decisions).toFixed(2).padStart(6)} µs Redis CPU  per decision`);
}
for (let i = 0; i < KEYS / 50; i++) await client.fcall('floor', 50, ...keysFrom(i)); // every key made
console.log(`Redis on 127.0.0.1:${port}, ${KEYS} keys, ${CALLS} calls per measure`);
for (let round = 1; round <= ROUNDS; round++) {
  console.log(`round ${round}`);
  await measure('batch of 50, every argument', (i) => client.fcall(DECISION_BATCH_FUNCTION, 50, ...keysFrom(i), '', ...Array(50).fill(spec)), 50);
  await measure("batch of 50, repeated arguments as '' (store)", (i) => client.fcall(DECISION_BATCH_FUNCTION, 50, ...keysFrom(i), '', spec, ...Array(49).fill('')), 50);
  await measure('floor: INCR, PTTL, format, 50 per call', (i) => client.fcall('floor', 50, ...keysFrom(i)), 50);
  await measure('lone calls, 50 in flight', (i) => Promise.all(keysFrom(i).map((key) => client.fcall(DECISION_FUNCTION, 1, key, spec))), 1);
}
client.disconnect();
server.kill();
