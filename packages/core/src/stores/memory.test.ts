import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { Decision } from '../decision';
import { type LimitOptions, resolveLimit } from '../limit';
import { createLimiter, type Limiter } from '../limiter';
import type { MaybePromise } from './types';
import { type MemoryStore, memoryStore } from './memory';

const T0 = 1_700_000_000_000;

function sync(result: MaybePromise<Decision>): Decision {
  if (result instanceof Promise) throw new Error('the in-memory path returned a Promise');
  return result;
}

const fivePerSecond: LimitOptions = { limit: 5, windowMs: 1_000 };

describe('memoryStore', () => {
  let store: MemoryStore;
  let t: number;
  const now = () => t;
  const on = (limits: LimitOptions | LimitOptions[], prefix?: string): Limiter => createLimiter({ limits, store, prefix, now });

  beforeEach(() => {
    t = T0;
    store = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
  });
  afterEach(() => store.dispose());

  describe('evaluate', () => {
    it('answers with a plain decision, not a Promise', () => {
      const result = store.evaluate({ key: 'k', namespace: '', limits: [resolveLimit(fivePerSecond)], cost: 1, mode: 'consume', nowMs: T0 });
      expect(result).not.toBeInstanceOf(Promise);
      expect(result).toMatchObject({ allowed: true, remaining: 4 });
    });

    it('treats keys that look like object properties as ordinary keys', () => {
      const limiter = on(fivePerSecond);
      for (const key of ['__proto__', 'constructor', 'hasOwnProperty', '']) expect(sync(limiter.consume(key)).remaining).toBe(4);
      expect(store.size).toBe(4);
    });
  });

  describe('states of every length', () => {
    // A state of up to SLAB_STRIDE numbers lives in the slab; longer ones (a sliding log of
    // several hits, a blocked sliding window) are kept as arrays, and move back when they shrink.
    it('a sliding log grows past the slab and shrinks back into it without losing a hit', () => {
      const log = on({ algorithm: 'sliding-log', limit: 3, windowMs: 1_000 });
      const at = (ms: number) => {
        t = T0 + ms;
        return sync(log.consume('k'));
      };
      expect([at(0), at(100), at(200), at(300)].map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect([at(1_000).allowed, at(1_050).allowed]).toEqual([true, false]); // the hit at 0 left; 100 and 200 still count
      expect(at(1_150).allowed).toBe(true); // the hit at 100 left
      expect(at(2_300)).toMatchObject({ allowed: true, remaining: 2 }); // every earlier hit left: a one-hit log again
    });

    it('keeps every state as its slab grows past its first 1,024 slots', () => {
      store.dispose();
      store = memoryStore({ maxKeys: 5_000, pruneIntervalMs: 0 });
      const limiter = on({ algorithm: 'sliding-window', limit: 10, windowMs: 1_000 });
      const keys = Array.from({ length: 3_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
      keys.forEach((key, i) => {
        for (let hit = 0; hit <= i % 3; hit++) sync(limiter.consume(key));
      });
      expect(keys.map((key) => sync(limiter.peek(key)).remaining)).toEqual(keys.map((_, i) => 10 - (i % 3) - 1));
      expect(store.size).toBe(3_000);
    });

    it('a blocked sliding window (4 numbers) keeps its block and its counts', () => {
      const blocked = on({ algorithm: 'sliding-window', limit: 2, windowMs: 1_000, blockDurationMs: 5_000 });
      const at = (ms: number) => {
        t = T0 + ms;
        return sync(blocked.consume('k'));
      };
      expect([at(0).allowed, at(10).allowed, at(20).allowed]).toEqual([true, true, false]);
      expect(at(3_000)).toMatchObject({ allowed: false, retryAfterMs: 2_020 });
      expect(at(5_020).allowed).toBe(true);
    });
  });

  describe('with maxKeys', () => {
    it('holds at most maxKeys keys in its LRU; an evicted key with half its budget or more starts afresh', () => {
      store = memoryStore({ maxKeys: 2, pruneIntervalMs: 0 });
      const limiter = on(fivePerSecond);
      sync(limiter.consume('a', { cost: 5 }));
      sync(limiter.consume('b', { cost: 2 }));
      sync(limiter.peek('a')); // a is now the most recently used
      sync(limiter.consume('c'));
      expect(store.size).toBe(2);
      expect(sync(limiter.peek('a')).remaining).toBe(0);
      expect(sync(limiter.peek('b')).remaining).toBe(5);
    });

    it('an evicted key with less than half its budget left is kept aside (ceil(maxKeys / 10) of them), not reset', () => {
      store = memoryStore({ maxKeys: 2, pruneIntervalMs: 0 });
      const limiter = on(fivePerSecond);
      sync(limiter.consume('a', { cost: 5 }));
      sync(limiter.consume('b', { cost: 4 }));
      sync(limiter.peek('a'));
      sync(limiter.consume('c'));
      expect(store.size).toBe(3);
      expect(sync(limiter.peek('b')).remaining).toBe(1);
    });
  });

  describe('prune', () => {
    it('drops only the keys whose state has expired', () => {
      const limiter = on(fivePerSecond);
      sync(limiter.consume('early'));
      t = T0 + 500;
      sync(limiter.consume('late'));
      expect(store.prune(T0 + 999)).toBe(0);
      expect(store.prune(T0 + 1_000)).toBe(1);
      expect(store.size).toBe(1);
      t = T0 + 1_000;
      expect(sync(limiter.peek('late')).remaining).toBe(4);
    });

    it('keeps a key while any of its limits still holds state', () => {
      const limiter = on([fivePerSecond, { limit: 5, windowMs: 60_000 }]);
      sync(limiter.consume('k'));
      expect(store.prune(T0 + 1_000)).toBe(0);
      expect(store.prune(T0 + 60_000)).toBe(1);
      expect(store.size).toBe(0);
    });

    it('drops a key whose bucket has refilled', () => {
      const limiter = on({ algorithm: 'gcra', limit: 10, windowMs: 1_000 });
      sync(limiter.consume('k', { cost: 3 }));
      expect(store.prune(T0 + 299)).toBe(0);
      expect(store.prune(T0 + 300)).toBe(1);
    });
  });

  describe('pruning without a timer', () => {
    afterEach(() => jest.restoreAllMocks());

    it('starts no timer, at construction or while deciding (a Worker refuses one at module scope)', () => {
      const timers = (['setInterval', 'setTimeout', 'setImmediate'] as const).map((name) => jest.spyOn(globalThis, name));
      const timed = memoryStore({ maxKeys: 1_000, pruneIntervalMs: 1_000 });
      const limiter = createLimiter({ limits: [fivePerSecond, { algorithm: 'gcra', limit: 5, windowMs: 1_000 }], store: timed, now });
      for (let i = 0; i < 200; i++) {
        t = T0 + i * 100; // 20 s: the store prunes about 20 times
        sync(limiter.consume(`key-${i}`));
        sync(limiter.peek(`key-${i}`));
      }
      for (const timer of timers) expect(timer).not.toHaveBeenCalled();
      timed.dispose();
      expect(timed.size).toBe(0);
    });

    it('prunes expired keys on the first decision at or after every pruneIntervalMs of the caller’s clock', () => {
      const timed = memoryStore({ maxKeys: 100, pruneIntervalMs: 1_000 });
      const limiter = createLimiter({ limits: { limit: 5, windowMs: 500 }, store: timed, now });
      sync(limiter.consume('a')); // the first decision: the interval starts at T0
      sync(limiter.consume('b'));
      expect(timed.size).toBe(2);
      t = T0 + 999; // both expired at T0 + 500, but no prune is due yet
      sync(limiter.peek('c'));
      expect(timed.size).toBe(2);
      t = T0 + 1_000; // due: 'a' and 'b' are dropped before 'c' is decided
      sync(limiter.consume('c'));
      expect(timed.size).toBe(1);
      t = T0 + 1_999; // 'c' expired at T0 + 1_500; the next prune is due at T0 + 2_000
      sync(limiter.consume('d'));
      expect(timed.size).toBe(2);
      t = T0 + 2_000;
      sync(limiter.consume('d'));
      expect(timed.size).toBe(1);
    });

    it('prunes on every kind of decision: a policy, a blocked limit, peek and refund', () => {
      for (const decide of [(l: Limiter) => l.consume('new'), (l: Limiter) => l.peek('new'), (l: Limiter) => l.refund('new')]) {
        for (const limits of [fivePerSecond, [fivePerSecond, { algorithm: 'gcra', limit: 5, windowMs: 1_000 }], { ...fivePerSecond, blockDurationMs: 1_000 }] as Array<LimitOptions | LimitOptions[]>) {
          t = T0;
          const timed = memoryStore({ maxKeys: 100, pruneIntervalMs: 60_000 });
          const limiter = createLimiter({ limits, store: timed, now });
          sync(limiter.consume('old'));
          t = T0 + 60_000;
          sync(decide(limiter));
          expect(timed.prune(t)).toBe(0); // 'old' went with the due prune
        }
      }
    });

    it('never prunes when pruneIntervalMs is 0: expired keys wait for the LRU', () => {
      const kept = memoryStore({ pruneIntervalMs: 0, maxKeys: 10 });
      const limiter = createLimiter({ limits: fivePerSecond, store: kept, now });
      sync(limiter.consume('a'));
      t = T0 + 10 * 60_000;
      sync(limiter.consume('b'));
      expect(kept.size).toBe(2);
      expect(kept.prune(t)).toBe(1); // 'a'; 'b' is live
    });
  });

  describe('shared by several limiters', () => {
    it('keeps counters apart for limiters with different prefixes', () => {
      const a = on(fivePerSecond, 'a');
      const b = on(fivePerSecond, 'b');
      sync(a.consume('k', { cost: 5 }));
      expect(sync(a.consume('k')).allowed).toBe(false);
      expect(sync(b.consume('k'))).toMatchObject({ allowed: true, remaining: 4 });
      expect(store.size).toBe(1);
    });

    it('lets limiters with the same prefix and limits share a counter', () => {
      const a = on(fivePerSecond, 'api');
      const b = on(fivePerSecond, 'api');
      sync(a.consume('k', { cost: 3 }));
      expect(sync(b.peek('k')).remaining).toBe(2);
    });

    it('cannot be reached from another namespace through a crafted key', () => {
      const tenant = on(fivePerSecond, 'tenant');
      const open = on(fivePerSecond);
      sync(tenant.consume('victim', { cost: 5 }));
      const id = resolveLimit(fivePerSecond).id;
      const crafted = ['tenant\u0000victim', `victim\u0000tenant\u0000${id}`, `tenant\u0000${id}`, `\u0000${id}`, 'victim\u0000'];
      for (const key of crafted) {
        expect(sync(open.consume(key, { cost: 5 }))).toMatchObject({ allowed: true, remaining: 0 });
        expect(sync(tenant.peek(key)).remaining).toBe(5);
      }
      expect(sync(tenant.peek('victim')).remaining).toBe(0);
      expect(sync(open.peek('victim')).remaining).toBe(5);
    });

    it('keeps both states when a second limiter sees a key after the first', () => {
      const first = on(fivePerSecond, 'first');
      const second = on({ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, 'second');
      sync(first.consume('k', { cost: 2 }));
      sync(second.consume('k', { cost: 7 }));
      sync(first.consume('k'));
      expect(sync(first.peek('k')).remaining).toBe(2);
      expect(sync(second.peek('k')).remaining).toBe(3);
      expect(store.size).toBe(1);
    });

    it('resets a key only in the namespace asked for', () => {
      const a = on(fivePerSecond, 'a');
      const b = on({ ...fivePerSecond, name: 'b-limit' }, 'b');
      sync(a.consume('k', { cost: 2 }));
      sync(a.consume('other', { cost: 2 }));
      sync(b.consume('k', { cost: 3 }));
      expect(a.reset('k')).toBeUndefined();
      expect(sync(a.peek('k')).remaining).toBe(5);
      expect(sync(a.peek('other')).remaining).toBe(3);
      expect(sync(b.peek('k')).remaining).toBe(2);
      expect(b.reset('k')).toBeUndefined();
      expect(sync(b.peek('k')).remaining).toBe(5);
      expect(store.size).toBe(1);
    });
  });

  describe('with several limits on one key', () => {
    const limits: LimitOptions[] = [
      { algorithm: 'token-bucket', limit: 10, windowMs: 1_000, name: 'second' },
      { algorithm: 'sliding-log', limit: 20, windowMs: 60_000, name: 'minute' },
      { algorithm: 'fixed-window', limit: 50, windowMs: 3_600_000, name: 'hour' },
    ];

    it('keeps one state per limit under one key', () => {
      const limiter = on(limits);
      sync(limiter.consume('k', { cost: 4 }));
      t = T0 + 100;
      sync(limiter.consume('k', { cost: 2 }));
      expect(sync(limiter.peek('k')).limits.map((l) => [l.name, l.remaining])).toEqual([
        ['second', 5],
        ['minute', 14],
        ['hour', 44],
      ]);
      expect(store.size).toBe(1);
    });

    it('forgets every limit of the key on reset', () => {
      const limiter = on(limits);
      sync(limiter.consume('k', { cost: 4 }));
      expect(limiter.reset('k')).toBeUndefined();
      expect(sync(limiter.peek('k')).limits.map((l) => l.remaining)).toEqual([10, 20, 50]);
      expect(store.size).toBe(0);
    });

    it("keeps every limit's state as the store grows past its first 1,024 slots", () => {
      // The first policy's states are packed in a slab of their own, which grows with the LRU
      // index; a sliding log of more hits than fit there is kept as an array instead.
      store.dispose();
      store = memoryStore({ maxKeys: 5_000, pruneIntervalMs: 0 });
      const limiter = on(limits);
      const keys = Array.from({ length: 3_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
      keys.forEach((key, i) => {
        for (let hit = 0; hit <= i % 5; hit++) sync(limiter.consume(key));
      });
      const left = (i: number) => [10 - (i % 5) - 1, 20 - (i % 5) - 1, 50 - (i % 5) - 1];
      expect(keys.map((key) => sync(limiter.peek(key)).limits.map((l) => l.remaining))).toEqual(keys.map((_, i) => left(i)));
      expect(store.size).toBe(3_000);
    });

    it('keeps a second policy on the same store apart from the first', () => {
      const first = on(limits, 'first');
      const second = on(
        [
          { algorithm: 'gcra', limit: 4, windowMs: 1_000, name: 'second' },
          { algorithm: 'sliding-window', limit: 8, windowMs: 10_000, name: 'ten' },
        ],
        'second',
      );
      sync(first.consume('k', { cost: 3 }));
      sync(second.consume('k', { cost: 2 }));
      sync(first.consume('k'));
      expect(sync(first.peek('k')).limits.map((l) => l.remaining)).toEqual([6, 16, 46]);
      expect(sync(second.peek('k')).limits.map((l) => l.remaining)).toEqual([2, 6]);
    });

    it('keeps a single-limit limiter on the same key apart', () => {
      const many = on(limits, 'many');
      const one = on(fivePerSecond, 'one');
      sync(one.consume('k', { cost: 5 }));
      sync(many.consume('k', { cost: 4 }));
      expect(sync(one.peek('k')).remaining).toBe(0);
      expect(sync(many.peek('k')).limits.map((l) => l.remaining)).toEqual([6, 16, 46]);
    });
  });
});

/** toEqual, with a fast path: jest's deep equality is slow inside a property's inner loop. */
function same(actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toEqual(expected);
}

describe('memoryStore (property)', () => {
  // Limiters sharing one store answer exactly as twins on stores of their own, whatever the
  // interleaving, the keys (crafted ones included), resets and prunes.
  const limiterSpecs: Array<{ prefix: string; limits: LimitOptions | LimitOptions[] }> = [
    { prefix: '', limits: { limit: 3, windowMs: 1_000 } },
    { prefix: 'a', limits: { limit: 3, windowMs: 1_000 } },
    {
      prefix: 'b',
      limits: [
        { algorithm: 'gcra', limit: 4, windowMs: 2_000 },
        { algorithm: 'sliding-log', limit: 6, windowMs: 5_000 },
      ],
    },
    { prefix: 'a\u0001', limits: { algorithm: 'token-bucket', limit: 2, windowMs: 500, burst: 3 } },
    {
      prefix: 'c',
      limits: [
        { algorithm: 'fixed-window', limit: 3, windowMs: 1_000 },
        { algorithm: 'sliding-window', limit: 5, windowMs: 2_000 },
      ],
    },
  ];
  const keys = ['k', 'a\u0000k', 'b\u0000k', `k\u0000a\u0000${resolveLimit({ limit: 3, windowMs: 1_000 }).id}`, ''];
  const opArb = fc.record({
    limiter: fc.nat({ max: limiterSpecs.length - 1 }),
    key: fc.constantFrom(...keys),
    op: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund', 'reset', 'prune'),
    cost: fc.integer({ min: 0, max: 3 }),
    dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 })),
  });

  it('keeps limiters sharing a store as separate as limiters on stores of their own', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) => {
        let t = T0;
        const now = () => t;
        const shared = memoryStore({ maxKeys: 1_000, pruneIntervalMs: 0 });
        const alone = limiterSpecs.map(() => memoryStore({ maxKeys: 1_000, pruneIntervalMs: 0 }));
        const together = limiterSpecs.map(({ prefix, limits }) => createLimiter({ limits, prefix, store: shared, now }));
        const twins = limiterSpecs.map(({ prefix, limits }, i) => createLimiter({ limits, prefix, store: alone[i], now }));
        // Pruning forgets expired state as a whole key, while a key kept alive by another slot keeps
        // its expired state: admissions and tokensAfter agree, but the split of tokensAfter into
        // tokensBefore + tokensRefilled then differs, so it is compared only until the first prune.
        let pruned = false;
        const seen = (d: Decision) => (pruned ? { ...d, limits: d.limits.map(({ tokensBefore, tokensRefilled, ...rest }) => rest) } : d);
        for (const { limiter, key, op, cost, dtMs } of ops) {
          t += dtMs;
          if (op === 'prune') {
            pruned = true;
            shared.prune(t);
            for (const store of alone) store.prune(t);
          } else if (op === 'reset') {
            expect(together[limiter]!.reset(key)).toBeUndefined();
            expect(twins[limiter]!.reset(key)).toBeUndefined();
          } else {
            const run = (l: Limiter) => sync(op === 'consume' ? l.consume(key, { cost }) : op === 'peek' ? l.peek(key, { cost }) : l.refund(key, { cost }));
            same(seen(run(together[limiter]!)), seen(run(twins[limiter]!)));
          }
          // Every limiter reads every key as its twin does.
          together.forEach((l, i) => keys.forEach((k) => same(seen(sync(l.peek(k))), seen(sync(twins[i]!.peek(k))))));
        }
      }),
    );
  });
});

describe('memoryStore: the direct consume path', () => {
  // A limiter on the store itself decides consumes without a request object; one on a copy of
  // the store (`{ ...store }`) goes through `evaluate`. The two must agree on every decision and
  // every state, for every algorithm and for policies of several limits, with blocks, costs,
  // evictions and keys kept aside.
  const policies: Array<LimitOptions | LimitOptions[]> = [
    { algorithm: 'fixed-window', limit: 3, windowMs: 1_000 },
    { algorithm: 'sliding-window', limit: 4, windowMs: 1_000 },
    { algorithm: 'sliding-log', limit: 5, windowMs: 800 },
    { algorithm: 'token-bucket', limit: 2, windowMs: 500, burst: 3 },
    { algorithm: 'gcra', limit: 4, windowMs: 2_000 },
    { algorithm: 'delay', limit: 2, windowMs: 1_000, burst: 2 },
    { algorithm: 'fixed-window', limit: 2, windowMs: 1_000, blockDurationMs: 3_000 },
    [
      { algorithm: 'gcra', limit: 3, windowMs: 1_000, name: 'second' },
      { algorithm: 'fixed-window', limit: 5, windowMs: 3_000, name: 'window' },
    ],
    [
      { algorithm: 'sliding-window', limit: 4, windowMs: 1_000, name: 'second' },
      { algorithm: 'token-bucket', limit: 2, windowMs: 500, burst: 3, name: 'bucket' },
    ],
    [
      { algorithm: 'token-bucket', limit: 2, windowMs: 500, burst: 3, name: 'bucket' },
      { algorithm: 'sliding-log', limit: 6, windowMs: 2_000, name: 'log' },
    ],
    [
      { algorithm: 'fixed-window', limit: 4, windowMs: 1_000, name: 'second' },
      { algorithm: 'delay', limit: 2, windowMs: 1_000, burst: 2, name: 'pace' },
    ],
    [
      { algorithm: 'gcra', limit: 4, windowMs: 1_000, name: 'second' },
      { algorithm: 'fixed-window', limit: 6, windowMs: 2_000, blockDurationMs: 3_000, name: 'blocking' },
    ],
  ];
  const opArb = fc.record({
    key: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    op: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund', 'reset'),
    cost: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(0.5)),
    dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_200 })),
  });

  it('answers and keeps state exactly as evaluate does', () => {
    fc.assert(
      fc.property(fc.constantFrom(...policies), fc.array(opArb, { minLength: 1, maxLength: 80 }), (limits, ops) => {
        let t = T0;
        const now = () => t;
        // 3 keys in the LRU for 5 keys used: evictions, and keys kept aside and rescued.
        const direct = createLimiter({ limits, store: memoryStore({ maxKeys: 3, pruneIntervalMs: 0 }), now });
        const viaEvaluate = createLimiter({ limits, store: { ...memoryStore({ maxKeys: 3, pruneIntervalMs: 0 }) }, now });
        for (const { key, op, cost, dtMs } of ops) {
          t += dtMs;
          if (op === 'reset') {
            expect(direct.reset(key)).toBeUndefined();
            expect(viaEvaluate.reset(key)).toBeUndefined();
            continue;
          }
          const run = (l: Limiter) => sync(op === 'consume' ? l.consume(key, { cost }) : op === 'peek' ? l.peek(key, { cost }) : l.refund(key, { cost }));
          same(run(direct), run(viaEvaluate));
        }
        for (const key of ['a', 'b', 'c', 'd', 'e']) same(sync(direct.peek(key)), sync(viaEvaluate.peek(key)));
      }),
    );
  });

  it('is not taken by a limiter on a wrapper of the store, so a wrapped evaluate sees every consume', () => {
    const inner = memoryStore({ pruneIntervalMs: 0 });
    const seen: string[] = [];
    const wrapper = { ...inner, evaluate: (request: Parameters<MemoryStore['evaluate']>[0]) => (seen.push(request.mode), inner.evaluate(request)) };
    const limiter = createLimiter({ limits: fivePerSecond, store: wrapper, now: () => T0 });
    sync(limiter.consume('k'));
    sync(limiter.consume('k'));
    expect(seen).toEqual(['consume', 'consume']);
    expect(sync(limiter.peek('k')).remaining).toBe(3);
  });
});
