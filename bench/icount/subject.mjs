// One contender making N sequential decisions, for instruction counting under
// callgrind (see ./count.sh and bench/notes/instruction-counts.md).
//
//   node subject.mjs <contender> <N> <keyCount>
//
// contender: map (the decisions part's baseline), floor, floor-decision and floor-entry (bench/lib/floors.mjs:
// a fixed window written inline on the memory store's layout, without a returned object, with one, with one shaped as
// core's Decision), floor-policy (the decisions part's two-limit policy written the same way), lru (the same on lru-cache,
// state updated in place), fastify (@fastify/rate-limit LocalStore.incr), erl
// (express-rate-limit MemoryStore.increment, not awaited: its Promise is made
// but the await's cost is not counted), or a ratekit algorithm name, or
// `policy` (gcra/s + fixed-window/h), or `two-limiters` (a gcra and a fixed-window
// limiter, each on its own store, called in turn): createLimiter().consume(key).allowed on
// memoryStore, limits 1e12 as in the decisions part (sliding log: 10 ms window).
// CORE=<path to an index.js> measures another build of @ratekit/core.
// SUBSCRIBED=1 attaches a no-op ratekit:decision subscriber.

import { subscribe } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { fixedWindowFloor, policyFloor } from '../lib/floors.mjs';

const require = createRequire(import.meta.url);
const [, , which, nText, kText] = process.argv;
const N = Number(nText);
const K = Number(kText);
const keys = Array.from({ length: K }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
const NEVER = 1e12;
const HOUR_MS = 3_600_000;

let decide;
if (which === 'map') {
  const map = new Map();
  decide = (key) => {
    const nowMs = Date.now();
    const used = (map.get(key) ?? 0) + 1;
    map.set(key, used);
    return used <= NEVER && nowMs > 0;
  };
} else if (which === 'lru') {
  // lru-cache, the LRU library the memory store used before its own index.
  const { LRUCache } = require('lru-cache');
  const cache = new LRUCache({ max: Math.max(K, 100_000), dispose: () => {} });
  const options = {};
  decide = (key) => {
    const nowMs = Date.now();
    let state = cache.get(key, options);
    options.status = undefined;
    if (state === undefined) {
      state = [nowMs, 0];
      cache.set(key, state);
    }
    state[1]++;
    return state[1] <= NEVER;
  };
} else if (which === 'fastify') {
  const LocalStore = require('@fastify/rate-limit/store/LocalStore.js');
  const store = new LocalStore(false, false, Math.max(K, 100_000));
  let result;
  const cb = (error, value) => {
    result = value;
  };
  decide = (key) => {
    store.incr(key, cb, HOUR_MS, NEVER);
    return result.current <= NEVER;
  };
} else if (which === 'floor' || which === 'floor-decision' || which === 'floor-entry') {
  decide = fixedWindowFloor(Math.max(K, 100_000), which === 'floor' ? 'boolean' : which === 'floor-decision' ? 'decision' : 'entry').decide;
} else if (which === 'floor-policy') {
  decide = policyFloor(Math.max(K, 100_000)).decide;
} else if (which === 'erl') {
  const { MemoryStore } = require('express-rate-limit');
  const store = new MemoryStore();
  store.init({ windowMs: HOUR_MS });
  decide = (key) => store.increment(key);
} else {
  const entry = process.env.CORE ?? new URL('../../packages/core/dist/index.js', import.meta.url).pathname;
  const core = await import(pathToFileURL(entry).href);
  if (which === 'two-limiters') {
    // Two limiters with different algorithms, each on its own memory store, called in turn:
    // the store's code (shared by every store) sees both algorithms, as in an app with a
    // fixed window on one route and GCRA on another.
    const a = core.createLimiter({ limits: { algorithm: 'gcra', limit: NEVER, windowMs: HOUR_MS }, store: core.memoryStore({ maxKeys: Math.max(K, 100_000), pruneIntervalMs: 0 }) });
    const b = core.createLimiter({ limits: { algorithm: 'fixed-window', limit: NEVER, windowMs: HOUR_MS }, store: core.memoryStore({ maxKeys: Math.max(K, 100_000), pruneIntervalMs: 0 }) });
    let turn = false;
    decide = (key) => {
      turn = !turn;
      return (turn ? a : b).consume(key).allowed;
    };
  }
  const limits =
    which === 'policy'
      ? [
          { algorithm: 'gcra', limit: NEVER, windowMs: 1_000, name: 'second' },
          { algorithm: 'fixed-window', limit: NEVER, windowMs: HOUR_MS, name: 'hour' },
        ]
      : { algorithm: which, limit: NEVER, windowMs: which === 'sliding-log' ? 10 : HOUR_MS };
  const store = core.memoryStore({ maxKeys: Math.max(K, 100_000), pruneIntervalMs: 0 });
  const limiter = which === 'two-limiters' ? undefined : core.createLimiter({ limits, store });
  if (process.env.SUBSCRIBED) subscribe('ratekit:decision', () => {});
  if (limiter !== undefined) decide = (key) => limiter.consume(key).allowed;
}

let admitted = 0;
let i = 0;
function loop(n) {
  for (let b = 0; b < n; b++) {
    if (decide(keys[i])) admitted++;
    if (++i === K) i = 0;
  }
}
for (let j = 0; j < K; j++) decide(keys[j]);
for (let j = 0; j < 200; j++) loop(1_024); // warm-up: optimised before counting starts to matter
for (let j = 0; j < N / 1_000; j++) loop(1_000);
if (process.env.VERBOSE) console.log(which, admitted);
