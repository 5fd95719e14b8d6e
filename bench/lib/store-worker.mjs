// Child process of the store part: one contender on one client connection,
// decisions with a fixed number in flight.
//
// Started by lib/child.mjs as `node store-worker.mjs`. Requests:
//   { cmd: 'prepare', client, variant, url, prefix, keyCount, inFlight, touchInFlight }
//       connects, builds the contender, touches every key once (touchInFlight at a time) → { type: 'ready', sanity }
//   { cmd: 'warmup', ms }    decisions for `ms`, not measured                 → { type: 'warm', sanity }
//   { cmd: 'slice', ms }     decisions for `ms`, `inFlight` at a time         → { type: 'slice', rate, cpuRate, ops, ms, cpuMs, refused }
//       rate: per wall-clock second; cpuRate: per second of this process's CPU time (user + system)
//   { cmd: 'count', ops }    exactly `ops` decisions, `inFlight` at a time    → { type: 'counted', ops, refused }
//   { cmd: 'lone', ms, twin }  one decision at a time for `ms` (nothing else in flight), alternating between this
//       contender and `twin` (the same with coalescing off) on the same connection, keys touched first
//       → { type: 'lone', ops, medianUs, p99Us, twinMedianUs, twinP99Us }
//   { cmd: 'finish' }        final sanity; closes the connection             → { type: 'finished', sanity, refused }

import { serveParent } from './child.mjs';
import { makeKeys } from './keys.mjs';
import { buildVariant, connectClient } from './store-contenders.mjs';

let connection;
let decide;
/** The twin for the lone-latency pairs (the same contender with coalescing off), and the prepare request. */
let twin;
let prepared;
let keys;
let inFlight;
let cursor = 0;
let refusedTotal = 0;
const problems = [];

/**
 * `inFlight` lanes, each awaiting one decision at a time, taking keys
 * round-robin from a shared cursor, until `done(started)` says stop. The
 * time includes draining the decisions in flight when it says so.
 */
async function drive(done) {
  const n = keys.length;
  let ops = 0;
  let refused = 0;
  let failure;
  const lane = async () => {
    while (failure === undefined && !done(ops)) {
      const key = keys[cursor];
      if (++cursor === n) cursor = 0;
      ops++;
      try {
        if (!(await decide(key))) refused++;
      } catch (error) {
        failure ??= error;
      }
    }
  };
  const cpu = process.cpuUsage();
  const start = performance.now();
  const lanes = [];
  for (let i = 0; i < inFlight; i++) lanes.push(lane());
  await Promise.all(lanes);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  if (failure !== undefined) throw failure;
  return { ops, refused, ms, cpuMs: (used.user + used.system) / 1_000 };
}

function forMs(ms) {
  const end = performance.now() + ms;
  return () => performance.now() >= end;
}

function sanity() {
  const found = [...problems];
  if (refusedTotal > 0) found.push(`${refusedTotal} decisions refused (the limit is meant never to be reached)`);
  return found.length === 0 ? 'ok' : found.join('; ');
}

// The parent closes the IPC channel when it is done with us, also after a
// failure elsewhere: leave then, open connection or not.
process.once('disconnect', () => process.exit(0));

serveParent(async (message) => {
  switch (message.cmd) {
    case 'prepare': {
      prepared = message;
      connection = await connectClient(message.client, message.url);
      ({ decide } = await buildVariant(message.variant, message.client, connection.client, message.prefix));
      keys = makeKeys(message.keyCount);
      // Touch every key once, so measured decisions find existing state.
      inFlight = Math.min(message.touchInFlight, keys.length);
      const touched = await drive((ops) => ops >= keys.length);
      inFlight = message.inFlight;
      if (touched.refused > 0) problems.push(`${touched.refused} of the first decisions refused`);
      return { type: 'ready', sanity: sanity() };
    }
    case 'warmup': {
      const warm = await drive(forMs(message.ms));
      refusedTotal += warm.refused;
      return { type: 'warm', sanity: sanity() };
    }
    case 'slice': {
      const result = await drive(forMs(message.ms));
      refusedTotal += result.refused;
      return { type: 'slice', rate: (result.ops * 1_000) / result.ms, cpuRate: (result.ops * 1_000) / result.cpuMs, ...result };
    }
    case 'lone': {
      // A lone decision's latency: each awaited before the next, so no two ever share a turn. Paired
      // with the twin decision by decision (in alternating order), so both see the same load.
      if (twin === undefined) {
        ({ decide: twin } = await buildVariant(message.twin, prepared.client, connection.client, `${prepared.prefix}lone:`));
        const own = decide;
        decide = twin;
        inFlight = Math.min(prepared.touchInFlight, keys.length);
        await drive((ops) => ops >= keys.length);
        inFlight = prepared.inFlight;
        decide = own;
      }
      const mine = [];
      const theirs = [];
      const end = performance.now() + message.ms;
      for (let i = 0; performance.now() < end; i++) {
        const key = keys[cursor];
        if (++cursor === keys.length) cursor = 0;
        for (const [run, into] of i % 2 === 0
          ? [
              [decide, mine],
              [twin, theirs],
            ]
          : [
              [twin, theirs],
              [decide, mine],
            ]) {
          const start = performance.now();
          if (!(await run(key))) refusedTotal++;
          into.push((performance.now() - start) * 1_000);
        }
      }
      const at = (list, q) => list.sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))];
      return { type: 'lone', ops: mine.length, medianUs: at(mine, 0.5), p99Us: at(mine, 0.99), twinMedianUs: at(theirs, 0.5), twinP99Us: at(theirs, 0.99) };
    }
    case 'count': {
      const result = await drive((ops) => ops >= message.ops);
      refusedTotal += result.refused;
      return { type: 'counted', ops: result.ops, refused: result.refused };
    }
    case 'finish': {
      await connection.close();
      return { type: 'finished', sanity: sanity(), refused: refusedTotal };
    }
    default:
      throw new Error(`unknown request ${JSON.stringify(message)}`);
  }
});
