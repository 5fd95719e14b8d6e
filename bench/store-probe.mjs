// A diagnostic, not a part: one store contender on one client (node-redis unless CLIENT=ioredis
// or CLIENT=ioredis-ap), alone in its process, outside the store part's harness. After 20,000
// sequential decisions (warm-up) it keeps N in flight for 3 s and prints decisions per second,
// client CPU µs per decision, how busy the process was, the mean latency, the Redis server's CPU
// µs per decision (INFO cpu; other clients' work counts too) and decisions per socket read of the
// server (INFO stats). For checking a store-part result against a plain loop (bench/notes/redis-floors.md,
// "Fixed window on node-redis").
//
//   node bench/store-probe.mjs <variant> <keyCount> [inFlight=50]      (REDIS_URL, default redis://127.0.0.1:6379)
//   CLIENT=ioredis node bench/store-probe.mjs rlf 1
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/store-probe.mjs fixed-window 100000

import { buildVariant, connectClient } from './lib/store-contenders.mjs';
import { adminClient, counterDelta, readCounters } from './lib/store-redis.mjs';
const [, , variant, keysText, flightText = '50'] = process.argv;
const K = Number(keysText);
const FLIGHT = Number(flightText);
const keys = Array.from({ length: K }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const clientId = process.env.CLIENT ?? 'node-redis';
const { client, close } = await connectClient(clientId, url);
// The server's counters are read on a connection of their own, as the store part reads them.
const admin = await adminClient(url);
const prefix = `ratekit-probe:${variant}:`;
const { decide } = await buildVariant(variant, clientId, client, prefix);
for (let j = 0; j < 20000; j++) await decide(keys[j % K]);
const before = await readCounters(admin);
let i = 0,
  done = 0,
  latSum = 0;
const c0 = process.cpuUsage();
const t0 = performance.now();
const until = t0 + 3000;
await new Promise((resolve) => {
  let inFlight = 0;
  const next = () => {
    while (inFlight < FLIGHT && performance.now() < until) {
      inFlight++;
      const s = performance.now();
      decide(keys[i]).then(() => {
        latSum += performance.now() - s;
        inFlight--;
        done++;
        next();
        if (inFlight === 0) resolve();
      });
      if (++i === K) i = 0;
    }
    if (inFlight === 0) resolve();
  };
  next();
});
const el = performance.now() - t0;
const cpu = process.cpuUsage(c0);
const { cpuUs: serverUs, reads } = counterDelta(before, await readCounters(admin));
console.log(
  variant.padEnd(12),
  'per s',
  ((done / el) * 1000).toFixed(0),
  'cpu µs/dec',
  ((cpu.user + cpu.system) / done).toFixed(1),
  'busy',
  (((cpu.user + cpu.system) / 1000 / el) * 100).toFixed(0) + '%',
  'lat ms',
  (latSum / done).toFixed(3),
  'server µs/dec',
  (serverUs / done).toFixed(1),
  'decisions/server read',
  (done / reads).toFixed(1),
);
// Leaves nothing behind on the server: deleted over the admin connection (ioredis), whichever client was measured.
for await (const batch of admin.scanStream({ match: `${prefix}*`, count: 1_000 })) {
  if (batch.length > 0) await admin.del(batch);
}
admin.disconnect();
await close();
