// The incumbents, in memory, as the decisions and bytes parts run them
// (bench/notes/method.md §1 and §3): each one's store called directly, the way its own
// middleware calls it once per request, with a limit that is never reached.
//
// - @fastify/rate-limit 11: `LocalStore.incr(key, cb, timeWindow, max)`, on
//   toad-cache's LruMap of `maxKeys` entries; synchronous (the callback runs
//   before incr returns).
// - express-rate-limit 8: `MemoryStore.increment(key)`, an async method (its
//   middleware awaits it); two Maps, rotated every window.
// - rate-limiter-flexible 11: `RateLimiterMemory.consume(key)`, a Promise; a
//   Map of records, each with an unref'd timer for its expiry.
// - koa-ratelimit 6, memory driver: `new Limiter({ id, db, max, duration }).get()`,
//   a Limiter built per request as its middleware does, on a shared Map.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const NEVER = 1e12;
const HOUR_MS = 3_600_000;

/** The incumbents: `{ id, label, what, mode, build(maxKeys) → { decide(key), size() } }`. */
export const PEERS = [
  {
    id: 'peer-fastify',
    label: '@fastify/rate-limit',
    what: 'LocalStore.incr(key, cb), LruMap',
    mode: 'sync',
    state: '{ current, ttl, iterationStartMs }',
    build(maxKeys) {
      const LocalStore = require('@fastify/rate-limit/store/LocalStore.js');
      const store = new LocalStore(false, false, maxKeys);
      let result;
      const cb = (error, value) => {
        if (error) throw error;
        result = value;
      };
      return {
        decide: (key) => {
          store.incr(key, cb, HOUR_MS, NEVER);
          return result.current <= NEVER;
        },
        size: () => store.lru.size,
      };
    },
  },
  {
    id: 'peer-express',
    label: 'express-rate-limit',
    what: 'await MemoryStore.increment(key)',
    mode: 'async',
    state: '{ totalHits, resetTime: Date }',
    build() {
      const { MemoryStore } = require('express-rate-limit');
      const store = new MemoryStore();
      store.init({ windowMs: HOUR_MS });
      // Its window rotation is an unref'd interval; it would fire once an hour.
      return {
        decide: async (key) => (await store.increment(key)).totalHits <= NEVER,
        size: () => store.current.size + store.previous.size,
      };
    },
  },
  {
    id: 'peer-flexible',
    label: 'rate-limiter-flexible',
    what: 'await RateLimiterMemory.consume(key)',
    mode: 'async',
    state: 'Record { value, expiresAt, timeoutId }',
    build() {
      const { RateLimiterMemory } = require('rate-limiter-flexible');
      const limiter = new RateLimiterMemory({ points: NEVER, duration: HOUR_MS / 1_000 });
      return {
        decide: async (key) => (await limiter.consume(key)).remainingPoints >= 0,
        size: () => limiter._memoryStorage._storage.size,
      };
    },
  },
  {
    id: 'peer-koa',
    label: 'koa-ratelimit (memory)',
    what: 'await new Limiter({ id: key, db: Map }).get()',
    mode: 'async',
    state: '{ id, reset, remaining, total }',
    build() {
      const Limiter = require('koa-ratelimit/limiter/memory.js');
      const db = new Map();
      return {
        decide: async (key) => (await new Limiter({ id: key, db, max: NEVER, duration: HOUR_MS }).get()).remaining > 0,
        size: () => db.size,
      };
    },
  },
];

/**
 * Issue 32's drop-in, built by the same code as `peer-flexible` with only the import changed:
 * `@ratekit/flexible`'s RateLimiterMemory (no timer per key; records swept when the store grows).
 * Measured beside the peers, judged against rate-limiter-flexible (bench/flexible.mjs).
 */
export const DROP_INS = [
  {
    id: 'dropin-flexible',
    label: '@ratekit/flexible (drop-in for rate-limiter-flexible)',
    what: "await RateLimiterMemory.consume(key), from '@ratekit/flexible'",
    mode: 'async',
    state: 'MemoryRecord { _value, _expiresAt }',
    dropIn: 'peer-flexible',
    build(maxKeys) {
      const { RateLimiterMemory } = require('@ratekit/flexible');
      const limiter = new RateLimiterMemory({ points: NEVER, duration: HOUR_MS / 1_000, maxKeys });
      return {
        decide: async (key) => (await limiter.consume(key)).remainingPoints >= 0,
        size: () => limiter._memoryStorage._storage.size,
      };
    },
  },
];
