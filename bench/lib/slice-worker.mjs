// Child process of a throughput benchmark: one contender, one key scenario.
//
// Started by bench/lib/child.mjs as `node slice-worker.mjs <part module>`.
// The part module exports `prepare(variantId, { keys, maxKeys })`, returning
// `{ mode: 'sync' | 'async', decide(key) → boolean | Promise<boolean>, check?() → string | undefined }`:
// `decide` makes one decision and says whether it was admitted; `check`
// returns a problem found in the contender's state, if any.
//
// Requests:
//   { cmd: 'prepare', variant, keyCount, maxKeys, warmupMs }
//       builds the contender, touches every key once, warms up  → { type: 'ready', sanity, mode }
//   { cmd: 'slice', ms }   sequential decisions for `ms`            → { type: 'slice', rate, cpuRate, ops, ms, cpuMs, refused }
//       rate: per wall-clock second; cpuRate: per second of this process's CPU time (user + system, all threads)
//   { cmd: 'finish' }      final sanity                             → { type: 'finished', sanity, refused }

import { pathToFileURL } from 'node:url';
import { serveParent } from './child.mjs';
import { makeKeys } from './keys.mjs';

/** Decisions between two clock reads; small against a 250 ms slice, large against the clock's cost. */
const BATCH = 1_024;

let subject;
let keys;
let cursor = 0;
let refusedTotal = 0;
const problems = [];

/** Sequential synchronous decisions for `ms`, round-robin over the keys. */
function sliceSync(decide, ms) {
  const n = keys.length;
  let i = cursor;
  let ops = 0;
  let refused = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  let now;
  do {
    for (let b = 0; b < BATCH; b++) {
      if (!decide(keys[i])) refused++;
      if (++i === n) i = 0;
    }
    ops += BATCH;
  } while ((now = performance.now()) < end);
  const used = process.cpuUsage(cpu);
  cursor = i;
  return { ops, ms: now - start, cpuMs: (used.user + used.system) / 1_000, refused };
}

/** The same, each decision awaited before the next. */
async function sliceAsync(decide, ms) {
  const n = keys.length;
  let i = cursor;
  let ops = 0;
  let refused = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  let now;
  do {
    for (let b = 0; b < BATCH; b++) {
      if (!(await decide(keys[i]))) refused++;
      if (++i === n) i = 0;
    }
    ops += BATCH;
  } while ((now = performance.now()) < end);
  const used = process.cpuUsage(cpu);
  cursor = i;
  return { ops, ms: now - start, cpuMs: (used.user + used.system) / 1_000, refused };
}

function slice(ms) {
  return subject.mode === 'async' ? sliceAsync(subject.decide, ms) : sliceSync(subject.decide, ms);
}

function sanity() {
  const found = [...problems];
  const problem = subject.check?.();
  if (problem) found.push(problem);
  if (refusedTotal > 0) found.push(`${refusedTotal} decisions refused (the limit is meant never to be reached)`);
  return found.length === 0 ? 'ok' : found.join('; ');
}

serveParent(async (message) => {
  switch (message.cmd) {
    case 'prepare': {
      const part = await import(pathToFileURL(process.argv[2]).href);
      keys = makeKeys(message.keyCount);
      subject = await part.prepare(message.variant, { keys, maxKeys: message.maxKeys });
      // Touch every key once, so the measured decisions find existing state.
      for (const key of keys) {
        const admitted = subject.mode === 'async' ? await subject.decide(key) : subject.decide(key);
        if (admitted !== true) problems.push(`first decision on ${key} returned ${String(admitted)}`);
        if (problems.length > 0) break;
      }
      const warm = await slice(message.warmupMs);
      refusedTotal += warm.refused;
      return { type: 'ready', sanity: sanity(), mode: subject.mode };
    }
    case 'slice': {
      const result = await slice(message.ms);
      refusedTotal += result.refused;
      return { type: 'slice', rate: (result.ops * 1_000) / result.ms, cpuRate: (result.ops * 1_000) / result.cpuMs, ...result };
    }
    case 'finish':
      return { type: 'finished', sanity: sanity(), refused: refusedTotal };
    default:
      throw new Error(`unknown request ${JSON.stringify(message)}`);
  }
});
