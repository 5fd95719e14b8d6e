import diagnostics_channel from 'node:diagnostics_channel';
import fc from 'fast-check';
import type { Decision } from './decision';
import { RateKitOptionError } from './errors';
import { CHANNELS, type DecisionEvent } from './events';
import { ALGORITHMS, type AlgorithmName, type LimitOptions, resolveLimit } from './limit';
import { consumeInAnyForm, createLimiter, type Limiter, type LimiterOptions } from './limiter';
import { evaluatePolicy } from './policy';
import { coreShape, DEFAULT_REFUSAL_CACHE_KEYS, REFUSAL_CACHE_MARGIN_MS, refusalDeadlineMs, resolveRefusalCacheOption, retimed, retimedCoreShape } from './refusal-cache';
import { memoryStore } from './stores/memory';
import type { EvaluateRequest, RateLimitStore } from './stores/types';

const T0 = 1_700_000_000_000;

/** The memory store presented as a shared (remote) store, answering with promises, counting its calls. */
function sharedMemory(): RateLimitStore & { calls: EvaluateRequest[]; resets: number } {
  const inner = memoryStore({ maxKeys: 1_000, pruneIntervalMs: 0 });
  const calls: EvaluateRequest[] = [];
  const store = {
    name: 'shared-memory',
    shared: true,
    clock: 'caller' as const,
    calls,
    resets: 0,
    evaluate: async (request: EvaluateRequest) => {
      calls.push(request);
      return inner.evaluate(request);
    },
    resetKey: async (key: string, namespace: string) => {
      store.resets++;
      inner.resetKey(key, namespace);
    },
  };
  return store;
}

/** A limiter on a fixed clock that the test moves. */
function fixture(limits: LimiterOptions['limits'], rest: Partial<LimiterOptions> = {}) {
  const store = sharedMemory();
  const clock = { nowMs: T0 };
  const limiter = createLimiter({ limits, store, now: () => clock.nowMs, storeTimeoutMs: Infinity, ...rest });
  return { store, clock, limiter };
}

/** One row of a timeline: at `atMs` after T0, ask `cost`; expect the decision's source and figures. */
type Row = [atMs: number, cost: number, source: 'store' | 'cache', allowed: boolean, retryAfterMs: number, remaining: number];

async function playTimeline(limiter: Limiter, clock: { nowMs: number }, rows: readonly Row[], mode: 'consume' | 'peek' = 'consume') {
  for (const [atMs, cost, source, allowed, retryAfterMs, remaining] of rows) {
    clock.nowMs = T0 + atMs;
    const decision = await limiter[mode]('k', { cost });
    expect({ atMs, source: decision.source ?? 'store', allowed: decision.allowed, retryAfterMs: decision.retryAfterMs, remaining: decision.remaining }).toEqual({
      atMs,
      source,
      allowed,
      retryAfterMs: expect.closeTo(retryAfterMs, 6),
      remaining,
    });
  }
}

describe('the refusal cache', () => {
  describe('the refusalCache option', () => {
    it('is on with 10,000 keys by default on a shared store, off on an in-process one', () => {
      expect(resolveRefusalCacheOption(undefined, sharedMemory())).toEqual({ maxKeys: DEFAULT_REFUSAL_CACHE_KEYS });
      expect(resolveRefusalCacheOption(undefined, memoryStore({ pruneIntervalMs: 0 }))).toBe(false);
      expect(resolveRefusalCacheOption(undefined, undefined)).toBe(false);
      expect(resolveRefusalCacheOption({ maxKeys: 3 }, memoryStore({ pruneIntervalMs: 0 }))).toBe(false);
      expect(resolveRefusalCacheOption(true, sharedMemory())).toEqual({ maxKeys: DEFAULT_REFUSAL_CACHE_KEYS });
      expect(resolveRefusalCacheOption({}, sharedMemory())).toEqual({ maxKeys: DEFAULT_REFUSAL_CACHE_KEYS });
      expect(resolveRefusalCacheOption({ maxKeys: 3 }, sharedMemory())).toEqual({ maxKeys: 3 });
      expect(resolveRefusalCacheOption(false, sharedMemory())).toBe(false);
    });

    it.each([
      ['yes', 'refusalCache'],
      [null, 'refusalCache'],
      [[], 'refusalCache'],
      [{ maxKeys: 0 }, 'refusalCache.maxKeys'],
      [{ maxKeys: 1.5 }, 'refusalCache.maxKeys'],
      [{ maxKeys: '10' }, 'refusalCache.maxKeys'],
      [{ maxKey: 10 }, 'refusalCache.maxKey'],
    ])('refuses %p when the limiter is built, naming %s', (value, option) => {
      const build = () => createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: sharedMemory(), refusalCache: value as never });
      expect(build).toThrow(RateKitOptionError);
      expect(build).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }) as Error);
    });
  });

  describe('on a fixed clock (timelines)', () => {
    it('fixed window, 2 a second: a flood costs the store one call per refusal period', async () => {
      const { store, limiter, clock } = fixture({ algorithm: 'fixed-window', limit: 2, windowMs: 1_000 });
      await playTimeline(limiter, clock, [
        [0, 1, 'store', true, 0, 1],
        [0, 1, 'store', true, 0, 0],
        [100, 1, 'store', false, 900, 0], // refused: kept until 998 (900 - 1 ms margin, from the send time)
        [100, 1, 'cache', false, 900, 0],
        [500, 1, 'cache', false, 500, 0],
        [998, 1, 'cache', false, 2, 0],
        [999, 1, 'store', false, 1, 0], // the margin: asked again, refused by the store, not kept (1 ms left)
        [1_000, 1, 'store', true, 0, 1], // the window has turned: admitted, as the store says
      ]);
      expect(store.calls).toHaveLength(5);
      // A thousand refusals within the period: still no store call.
      clock.nowMs = T0 + 1_000;
      await limiter.consume('k');
      const before = store.calls.length;
      for (let i = 0; i < 1_000; i++) {
        clock.nowMs = T0 + 1_000 + (i % 900);
        expect((await limiter.consume('k')).allowed).toBe(false);
      }
      expect(store.calls.length - before).toBe(1);
    });

    it('a lockout (blockDurationMs, the login recipe): a flood costs the store one call per block', async () => {
      const minute = 60_000;
      const USERNAME = { limit: 5, windowMs: 15 * minute, blockDurationMs: 15 * minute, name: 'login-username' };
      const { store, limiter, clock } = fixture(USERNAME);
      await playTimeline(limiter, clock, [
        [0, 1, 'store', true, 0, 4],
        [0, 1, 'store', true, 0, 3],
        [0, 1, 'store', true, 0, 2],
        [0, 1, 'store', true, 0, 1],
        [0, 1, 'store', true, 0, 0],
        [1_000, 1, 'store', false, 15 * minute, 0], // refused: blocked until 1_000 + 15 min, kept until 1 ms before
        [1_001, 1, 'cache', false, 15 * minute - 1, 0],
        [10 * minute, 1, 'cache', false, 5 * minute + 1_000, 0],
        [15 * minute + 998, 1, 'cache', false, 2, 0],
        [15 * minute + 999, 1, 'store', false, 1, 0], // the margin: the store refuses (1 ms of block left), not kept
        [15 * minute + 1_000, 1, 'store', true, 0, 4], // the block is over, the window too: admitted
      ]);
      expect(store.calls).toHaveLength(8);

      // An hour's flood at 10 a second, with the cache and without: the same decisions. Each 15 min the
      // window and the block end together, 5 are admitted and the 6th is refused, which blocks again.
      const plain = fixture(USERNAME, { refusalCache: false });
      const cached = fixture(USERNAME);
      for (let atMs = 0; atMs < 60 * minute; atMs += 100) {
        plain.clock.nowMs = cached.clock.nowMs = T0 + atMs;
        const expected = await plain.limiter.consume('other');
        const actual = await cached.limiter.consume('other');
        expect({ atMs, allowed: actual.allowed, retryAfterMs: Math.round(actual.retryAfterMs) }).toEqual({ atMs, allowed: expected.allowed, retryAfterMs: Math.round(expected.retryAfterMs) });
      }
      expect(plain.store.calls).toHaveLength(36_000);
      // 4 cycles of 5 admissions and 1 refusal that blocks (plus at most one call in each block's last ms, the margin).
      expect(cached.store.calls.length).toBeGreaterThanOrEqual(24);
      expect(cached.store.calls.length).toBeLessThanOrEqual(28);
    });

    it('GCRA, 1 per 100 ms: the kept refusal is re-timed, its remaining unchanged', async () => {
      const { limiter, clock } = fixture({ algorithm: 'gcra', limit: 10, windowMs: 1_000, burst: 1 });
      await playTimeline(limiter, clock, [
        [0, 1, 'store', true, 0, 0],
        [30, 1, 'store', false, 70, 0],
        [60, 1, 'cache', false, 40, 0],
        [98, 1, 'cache', false, 2, 0],
        [99, 1, 'store', false, 1, 0],
        [100, 1, 'store', true, 0, 0],
      ]);
    });

    it('answers only the same cost: a refusal for cost 5 says nothing about cost 1', async () => {
      const { limiter, clock } = fixture({ algorithm: 'token-bucket', limit: 10, windowMs: 10_000, burst: 5 });
      await playTimeline(limiter, clock, [
        [0, 4, 'store', true, 0, 1],
        [0, 5, 'store', false, 4_000, 1], // one token short of 5: 4 s; but a whole token comes back in 1 s
        [500, 5, 'cache', false, 3_500, 1],
        [500, 1, 'store', true, 0, 0], // cost 1 asks the store, which admits it (and the kept cost-5 refusal is dropped)
        [600, 5, 'store', false, 4_400, 0],
        [600, 6, 'store', false, Infinity, 0], // beyond the burst: never kept
        [600, 6, 'store', false, Infinity, 0],
      ]);
    });

    it('answers a peek of the same cost from a kept refusal, and keeps a refused peek', async () => {
      const { store, limiter, clock } = fixture({ algorithm: 'sliding-log', limit: 1, windowMs: 1_000 });
      await limiter.consume('k');
      await playTimeline(
        limiter,
        clock,
        [
          [10, 1, 'store', false, 990, 0],
          [20, 1, 'cache', false, 980, 0],
        ],
        'peek',
      );
      await playTimeline(limiter, clock, [[30, 1, 'cache', false, 970, 0]]);
      expect(store.calls.map((c) => c.mode)).toEqual(['consume', 'peek']);
    });

    it('forgets a key at a refund or reset through the limiter', async () => {
      const { store, limiter, clock } = fixture({ algorithm: 'fixed-window', limit: 1, windowMs: 1_000 });
      await limiter.consume('k');
      expect((await limiter.consume('k')).source).toBeUndefined();
      expect((await limiter.consume('k')).source).toBe('cache');
      await limiter.refund('k');
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
      expect((await limiter.consume('k')).source).toBeUndefined();
      await limiter.reset('k');
      expect(store.resets).toBe(1);
      clock.nowMs += 1;
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
    });

    it('sees another process reset only when the kept refusal ends (the documented bound)', async () => {
      const { store, limiter, clock } = fixture({ algorithm: 'fixed-window', limit: 1, windowMs: 1_000 });
      const other = createLimiter({ limits: { algorithm: 'fixed-window', limit: 1, windowMs: 1_000 }, store, now: () => clock.nowMs });
      await limiter.consume('k');
      await limiter.consume('k');
      await other.reset('k');
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, source: 'cache' });
      clock.nowMs = T0 + 999;
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
    });

    it('does not keep a refusal answered after a refund that was sent later (the refund may have changed it)', async () => {
      const store = sharedMemory();
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The consume is decided at once (refused), but its answer arrives after the refund's.
      const slow: RateLimitStore = {
        ...store,
        evaluate: (r) => {
          const decided = store.evaluate(r);
          return r.mode === 'consume' ? gate.then(() => decided) : decided;
        },
      };
      const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: slow, now: () => T0 });
      await store.evaluate({ key: 'k', namespace: '', limits: limiter.limitsFor(), cost: 1, mode: 'consume', nowMs: T0 });
      const refused = limiter.consume('k');
      await limiter.refund('k');
      release();
      expect(await refused).toMatchObject({ allowed: false });
      expect((await limiter.peek('k')).source).toBeUndefined();
    });

    it('never answers from a store failure recovered by onStoreError', async () => {
      const broken: RateLimitStore = { name: 'broken', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('down')), resetKey: async () => undefined };
      const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: broken, onStoreError: 'deny', onError: () => undefined, now: () => T0 });
      const first = await limiter.consume('k');
      const second = await limiter.consume('k');
      expect([first.allowed, first.source, second.source]).toEqual([false, undefined, undefined]);
    });

    it('is off in the drop-in sense when asked: refusalCache false sends every request to the store', async () => {
      const { store, limiter } = fixture({ limit: 1, windowMs: 1_000 }, { refusalCache: false });
      for (let i = 0; i < 5; i++) await limiter.consume('k');
      expect(store.calls).toHaveLength(5);
    });

    it('keeps the limits set apart: a dynamic policy refusing one plan does not refuse another', async () => {
      const free: LimitOptions = { limit: 1, windowMs: 1_000, name: 'free' };
      const paid: LimitOptions = { limit: 100, windowMs: 1_000, name: 'paid' };
      const { limiter } = fixture((plan: unknown) => (plan === 'paid' ? paid : free));
      await limiter.consume('k', { context: 'free' });
      expect(await limiter.consume('k', { context: 'free' })).toMatchObject({ allowed: false });
      expect(await limiter.consume('k', { context: 'free' })).toMatchObject({ allowed: false, source: 'cache' });
      expect(await limiter.consume('k', { context: 'paid' })).toMatchObject({ allowed: true });
    });

    it('is bounded: a flood of new keys evicts the oldest, whose next request is asked of the store (and refused)', async () => {
      const { store, limiter } = fixture({ algorithm: 'fixed-window', limit: 1, windowMs: 60_000 }, { refusalCache: { maxKeys: 3 } });
      const refuse = async (key: string) => {
        await limiter.consume(key);
        await limiter.consume(key);
      };
      await refuse('victim');
      for (const key of ['a', 'b', 'c']) await refuse(key);
      const calls = store.calls.length;
      const decision = await limiter.consume('victim');
      expect([decision.allowed, decision.source, store.calls.length - calls]).toEqual([false, undefined, 1]);
    });

    it('publishes source "cache" on ratekit:decision for a kept refusal, "store" otherwise', async () => {
      const events: DecisionEvent[] = [];
      const listen = (event: unknown) => events.push(event as DecisionEvent);
      diagnostics_channel.subscribe(CHANNELS.decision, listen);
      try {
        const { limiter, store } = fixture({ limit: 1, windowMs: 1_000 }, { prefix: 'p' });
        await limiter.consume('k');
        await limiter.consume('k');
        await limiter.consume('k');
        expect(events.map((e) => [e.allowed, e.source])).toEqual([
          [true, 'store'],
          [false, 'store'],
          [false, 'cache'],
        ]);
        expect(events[2]).toMatchObject({ prefix: 'p', key: 'k', mode: 'consume', storeDurationMs: 0, fallback: false, retryAfterMs: 1_000 });
        expect(store.calls).toHaveLength(2);
      } finally {
        diagnostics_channel.unsubscribe(CHANNELS.decision, listen);
      }
    });
  });

  describe('refusalDeadlineMs', () => {
    const refusalOf = (options: LimitOptions | LimitOptions[], consumes: number, cost = 1) => {
      const limits = (Array.isArray(options) ? options : [options]).map((o, i) => resolveLimit(o, `limits[${i}]`));
      let states: Array<readonly number[] | undefined> = limits.map(() => undefined);
      for (let i = 0; i < consumes; i++) {
        const { writes } = evaluatePolicy(states, limits, 1, 'consume', T0);
        states = states.map((s, j) => (typeof writes[j] === 'symbol' ? s : writes[j]));
      }
      return { limits, decision: evaluatePolicy(states, limits, cost, 'consume', T0).decision };
    };

    it.each<[string, LimitOptions | LimitOptions[], number, number | undefined]>([
      ['an admission', { limit: 2, windowMs: 1_000 }, 1, undefined],
      ['a fixed-window refusal: to the window end, less the margin', { algorithm: 'fixed-window', limit: 1, windowMs: 1_000 }, 1, 1_000 - REFUSAL_CACHE_MARGIN_MS],
      ["a refusal that blocks: to the block's end (a refusal after it blocks again), less the margin", { limit: 1, windowMs: 1_000, blockDurationMs: 500 }, 1, 500 - REFUSAL_CACHE_MARGIN_MS],
      ["a refusal that blocks for longer than the window: to the block's end", { algorithm: 'gcra', limit: 1, windowMs: 1_000, blockDurationMs: 5_000 }, 1, 5_000 - REFUSAL_CACHE_MARGIN_MS],
      [
        'a refusal by a delay limit with a refused penalty and a block',
        { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 0, refusedPenaltyCapMs: 1_000, blockDurationMs: 500 },
        1,
        undefined,
      ],
      ['a refusal by a delay limit with a refused penalty', { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 0, refusedPenaltyCapMs: 1_000 }, 1, undefined],
      ['a delay refusal without a penalty', { algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 0 }, 1, 1_000 - REFUSAL_CACHE_MARGIN_MS],
      [
        'two limits refusing with the same wait (either could bind)',
        [
          { algorithm: 'fixed-window', limit: 1, windowMs: 1_000, name: 'a' },
          { algorithm: 'sliding-log', limit: 1, windowMs: 1_000, name: 'b' },
        ],
        1,
        undefined,
      ],
      [
        'two refusing limits: the sooner one (it admits after)',
        [
          { algorithm: 'fixed-window', limit: 1, windowMs: 1_000, name: 'a' },
          { algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'b' },
        ],
        1,
        1_000 - REFUSAL_CACHE_MARGIN_MS,
      ],
      [
        'a limit that admits but whose remaining grows sooner',
        [
          { algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'a' },
          { algorithm: 'gcra', limit: 100, windowMs: 10_000, name: 'b' },
        ],
        1,
        100 - REFUSAL_CACHE_MARGIN_MS,
      ],
      [
        'a blocking limit that admitted does not prevent keeping',
        [
          { algorithm: 'fixed-window', limit: 1, windowMs: 1_000, name: 'a' },
          { algorithm: 'fixed-window', limit: 5, windowMs: 1_000, name: 'b', blockDurationMs: 9_000 },
        ],
        1,
        1_000 - REFUSAL_CACHE_MARGIN_MS,
      ],
    ])('%s', (_, options, consumes, expected) => {
      const { limits, decision } = refusalOf(options, consumes);
      const deadline = refusalDeadlineMs(decision, limits, T0);
      expect(deadline === undefined ? undefined : deadline - T0).toBe(expected);
    });

    it("keeps a refusal during a block to the block's end, its wait the longer of the block and the algorithm's", () => {
      // Blocked for 500 ms at T0, asked again at T0 + 200: 300 ms of block left, the window ends at 1_000.
      const limits = [resolveLimit({ algorithm: 'fixed-window', limit: 1, windowMs: 1_000, blockDurationMs: 500 }, 'limits')];
      let state: readonly number[] | undefined;
      for (const nowMs of [T0, T0]) {
        const { writes } = evaluatePolicy([state], limits, 1, 'consume', nowMs);
        if (typeof writes[0] !== 'symbol') state = writes[0];
      }
      const { decision } = evaluatePolicy([state], limits, 1, 'consume', T0 + 200);
      expect(decision.limits[0]!.blockedMs).toBe(300);
      expect(decision.retryAfterMs).toBe(800);
      expect(refusalDeadlineMs(decision, limits, T0 + 200)).toBe(T0 + 200 + 300 - REFUSAL_CACHE_MARGIN_MS);
    });

    it('keeps no refusal by a blocking limit that is not blocked (a peek: its consume would block)', () => {
      const limits = [resolveLimit({ limit: 1, windowMs: 1_000, blockDurationMs: 500 }, 'limits')];
      const { writes } = evaluatePolicy([undefined], limits, 1, 'consume', T0);
      const { decision } = evaluatePolicy([writes[0] as readonly number[]], limits, 1, 'peek', T0);
      expect(decision.allowed).toBe(false);
      expect(decision.limits[0]!.blockedMs).toBeUndefined();
      expect(refusalDeadlineMs(decision, limits, T0)).toBeUndefined();
    });

    it('keeps no blocked refusal from a store that does not say how long the block has left (no blockedMs)', () => {
      const { limits, decision } = refusalOf({ limit: 1, windowMs: 1_000, blockDurationMs: 500 }, 1);
      expect(decision.limits[0]!.blockedMs).toBe(500);
      const { blockedMs: _, ...entry } = decision.limits[0]!;
      expect(refusalDeadlineMs({ ...decision, limits: [entry] }, limits, T0)).toBeUndefined();
    });

    it('keeps no refusal of a cost above the capacity (retryAfterMs Infinity)', () => {
      const { limits, decision } = refusalOf({ algorithm: 'gcra', limit: 1, windowMs: 1_000 }, 0, 2);
      expect(decision.retryAfterMs).toBe(Infinity);
      expect(refusalDeadlineMs(decision, limits, T0)).toBeUndefined();
    });

    const limitArbitrary = (algorithm: AlgorithmName): fc.Arbitrary<LimitOptions> =>
      fc
        .record({
          limit: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constantFrom(2.5, 7.5)),
          windowMs: fc.integer({ min: 50, max: 100_000 }),
          burst: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
          refill: fc.constantFrom<'continuous' | 'interval'>('continuous', 'interval'),
          maxDelayMs: fc.integer({ min: 0, max: 2_000 }),
          blockDurationMs: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined, freq: 4 }),
        })
        .map(({ limit, windowMs, burst, refill, maxDelayMs, blockDurationMs }) => {
          const options: LimitOptions = { algorithm, limit, windowMs };
          const bucket = algorithm === 'token-bucket' || algorithm === 'gcra' || algorithm === 'delay';
          if (bucket && burst !== undefined) options.burst = burst;
          if (algorithm === 'token-bucket') options.refill = refill;
          if (algorithm === 'delay') options.maxDelayMs = maxDelayMs;
          if (blockDurationMs !== undefined) options.blockDurationMs = blockDurationMs;
          return options;
        });

    it('property: until the deadline, the store gives the kept refusal again, re-timed, and writes nothing', () => {
      const scenario = fc.array(fc.constantFrom(...ALGORITHMS), { minLength: 1, maxLength: 3 }).chain((algorithms) =>
        fc.record({
          limits: fc.tuple(...algorithms.map((a, i) => limitArbitrary(a).map((o) => ({ ...o, name: `l${i}` })))),
          history: fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })), cost: fc.constantFrom(0.5, 1, 1, 2, 3) }), { maxLength: 25 }),
          cost: fc.constantFrom(0.5, 1, 1, 2, 3),
          probes: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 8 }),
        }),
      );
      let kept = 0;
      let keptBlocked = 0;
      fc.assert(
        fc.property(scenario, ({ limits: options, history, cost, probes }) => {
          const limits = options.map((o, i) => resolveLimit(o, `limits[${i}]`));
          const store = memoryStore({ maxKeys: 4, pruneIntervalMs: 0 });
          const ask = (mode: 'consume' | 'peek', c: number, nowMs: number) => store.evaluate({ key: 'k', namespace: '', limits, cost: c, mode, nowMs });
          let nowMs = T0;
          for (const { dtMs, cost: c } of history) ask('consume', c, (nowMs += dtMs));
          const refusal = ask('consume', cost, nowMs);
          const deadline = refusalDeadlineMs(refusal, limits, nowMs);
          if (deadline === undefined) return;
          kept++;
          if (refusal.limits.some((l) => l.blockedMs !== undefined)) keptBlocked++;
          const sentMs = nowMs;
          for (const share of [...probes, 0, 1].sort()) {
            const atMs = Math.min(deadline - 1e-6, sentMs + share * (deadline - sentMs));
            const again = ask('consume', cost, atMs);
            const answer = retimed(refusal, atMs - sentMs);
            expect(again.allowed).toBe(false);
            expect(answer.remaining).toBe(again.remaining);
            expect(answer.policy).toBe(again.policy);
            expect(answer.retryAfterMs).toBeCloseTo(again.retryAfterMs, 6);
            expect(answer.resetMs).toBeCloseTo(again.resetMs, 6);
            expect(answer.limits.map((l) => [l.allowed, l.remaining])).toEqual(again.limits.map((l) => [l.allowed, l.remaining]));
            answer.limits.forEach((l, i) => expect(l.retryAfterMs).toBeCloseTo(again.limits[i]!.retryAfterMs, 6));
            answer.limits.forEach((l, i) => expect(l.blockedMs ?? 0).toBeCloseTo(again.limits[i]!.blockedMs ?? 0, 6));
          }
        }),
        { numRuns: 500 },
      );
      // The property must not hold vacuously.
      expect(kept).toBeGreaterThan(40);
      expect(keptBlocked).toBeGreaterThan(10);
    });

    it("property: a kept refusal of core's shape is re-timed key for key, value for value, as the generic re-timing does it", () => {
      const scenario = fc.array(fc.constantFrom(...ALGORITHMS), { minLength: 1, maxLength: 3 }).chain((algorithms) =>
        fc.record({
          limits: fc.tuple(...algorithms.map((a, i) => limitArbitrary(a).map((o) => ({ ...o, name: `l${i}` })))),
          history: fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })), cost: fc.constantFrom(0.5, 1, 1, 2, 3) }), { maxLength: 25 }),
          cost: fc.constantFrom(0.5, 1, 1, 2, 3, 50),
          elapsed: fc.array(fc.oneof(fc.double({ min: 0, max: 200_000, noNaN: true }), fc.constantFrom(0, 0.5, 1, 1e-9)), { minLength: 1, maxLength: 6 }),
        }),
      );
      let compared = 0;
      let blocked = 0;
      fc.assert(
        fc.property(scenario, ({ limits: options, history, cost, elapsed }) => {
          const limits = options.map((o, i) => resolveLimit(o, `limits[${i}]`));
          const store = memoryStore({ maxKeys: 4, pruneIntervalMs: 0 });
          let nowMs = T0;
          for (const { dtMs, cost: c } of history) store.evaluate({ key: 'k', namespace: '', limits, cost: c, mode: 'consume', nowMs: (nowMs += dtMs) });
          const refusal = store.evaluate({ key: 'k', namespace: '', limits, cost, mode: 'consume', nowMs });
          if (refusal.allowed) return;
          const shape = coreShape(refusal);
          // Every decision core's memory store makes has core's shape.
          expect(shape).toBeDefined();
          if (refusal.limits.some((l) => Object.hasOwn(l, 'blockedMs'))) blocked++;
          for (const e of elapsed) {
            compared++;
            expect(ordered(retimedCoreShape(refusal, shape!, e))).toStrictEqual(ordered(retimed(refusal, e)));
          }
        }),
        { numRuns: 500 },
      );
      expect(compared).toBeGreaterThan(200);
      expect(blocked).toBeGreaterThan(10);
    });

    it("coreShape: any other shape (another key, another order, a symbol, a prototype, an array's subclass, a hole) is left to the generic re-timing", () => {
      const limits = [resolveLimit({ limit: 1, windowMs: 1_000 }, 'limits')];
      const store = memoryStore({ pruneIntervalMs: 0 });
      store.evaluate({ key: 'k', namespace: '', limits, cost: 1, mode: 'consume', nowMs: T0 });
      const refusal = store.evaluate({ key: 'k', namespace: '', limits, cost: 1, mode: 'consume', nowMs: T0 });
      expect(refusal.allowed).toBe(false);
      expect(coreShape(refusal)).toEqual([false]);
      const entry = refusal.limits[0]!;
      const { allowed, ...rest } = refusal;
      class Limits<T> extends Array<T> {}
      const holey: Decision['limits'][number][] = [];
      holey.length = 1;
      const others: Decision[] = [
        { ...refusal, extra: 1 } as Decision,
        { ...rest, allowed },
        { ...refusal, [Symbol('s')]: 1 },
        Object.assign<object, Decision>(Object.create({ inherited: true }) as object, refusal),
        { ...refusal, source: 'cache' },
        { ...refusal, limits: Limits.from([entry]) },
        { ...refusal, limits: holey },
        { ...refusal, limits: [{ ...entry, extra: 1 } as Decision['limits'][number]] },
        { ...refusal, limits: [{ blockedMs: 5, ...entry }] },
      ];
      for (const other of others) expect(coreShape(other)).toBeUndefined();
      expect(coreShape({ ...refusal, limits: [{ ...entry, blockedMs: undefined }] })).toEqual([true]);
    });

    it('a kept refusal of another shape (a store of its own) is re-timed by the generic spread: its extra fields stay', async () => {
      const inner = memoryStore({ pruneIntervalMs: 0 });
      const store: RateLimitStore = {
        name: 'extra-fields',
        shared: true,
        clock: 'caller',
        evaluate: async (r) => ({ ...inner.evaluate(r), region: 'eu' }) as Decision,
        resetKey: async (k, n) => inner.resetKey(k, n),
      };
      const clock = { nowMs: T0 };
      const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, now: () => clock.nowMs });
      await limiter.consume('k');
      const refused = await limiter.consume('k');
      clock.nowMs += 10;
      const cached = await limiter.consume('k');
      expect(cached.source).toBe('cache');
      expect(ordered(cached)).toStrictEqual(ordered(retimed(refused, 10)));
      expect((cached as Decision & { region: string }).region).toBe('eu');
    });
  });
});

describe('the refusal cache on a shared store that answers synchronously', () => {
  it("answers in the store's form: a plain value, no Promise (as @ratekit/synced does)", () => {
    const inner = memoryStore({ pruneIntervalMs: 0 });
    const calls: EvaluateRequest[] = [];
    const store: RateLimitStore = { name: 'sync-shared', shared: true, clock: 'caller', evaluate: (r) => (calls.push(r), inner.evaluate(r)), resetKey: (k, n) => inner.resetKey(k, n) };
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, now: () => T0 });
    const answers = [limiter.consume('k'), limiter.consume('k'), limiter.consume('k')];
    for (const answer of answers) expect(answer).not.toBeInstanceOf(Promise);
    expect((answers[2] as Decision).source).toBe('cache');
    expect(calls).toHaveLength(2);
  });
});

/** A value as nested [key, value] pairs in own-key order, so `toStrictEqual` also compares the order of the keys. */
function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (typeof value !== 'object' || value === null) return value;
  return Object.keys(value).map((key) => [key, ordered((value as Record<string, unknown>)[key])]);
}

describe('consumeInAnyForm', () => {
  it('answers a cached refusal as the decision itself, and everything else as consume does, with the same decisions', async () => {
    const clocks = { nowMs: T0 };
    const make = () => createLimiter({ limits: { limit: 2, windowMs: 1_000 }, store: sharedMemory(), now: () => clocks.nowMs });
    const viaConsume = make();
    const viaAnyForm = make();
    const consume = consumeInAnyForm(viaAnyForm);
    let cached = 0;
    for (const dt of [0, 0, 0, 1, 5, 400, 598, 1, 0, 3, 1_000, 0, 0, 0, 2]) {
      clocks.nowMs += dt;
      const expected = await viaConsume.consume('k');
      const answer = consume('k');
      if (expected.source === 'cache') {
        cached++;
        expect(typeof (answer as { then?: unknown }).then).toBe('undefined');
      } else expect(answer).toBeInstanceOf(Promise);
      expect(ordered(await answer)).toStrictEqual(ordered(expected));
    }
    expect(cached).toBeGreaterThan(3);
  });

  it('with a decision subscriber: the cached refusal is published once, as consume publishes it', () => {
    const events: DecisionEvent[] = [];
    const listen = (event: unknown) => events.push(event as DecisionEvent);
    diagnostics_channel.subscribe(CHANNELS.decision, listen);
    return (async () => {
      try {
        const { limiter } = fixture({ limit: 1, windowMs: 1_000 });
        const consume = consumeInAnyForm(limiter);
        await consume('k');
        await consume('k');
        const answer = consume('k');
        expect((answer as Decision).source).toBe('cache');
        expect(events.map((e) => e.source)).toEqual(['store', 'store', 'cache']);
      } finally {
        diagnostics_channel.unsubscribe(CHANNELS.decision, listen);
      }
    })();
  });

  it("is the limiter's consume for a limiter without a refusal cache, and for one it did not make", async () => {
    const local = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, now: () => T0 });
    const consume = consumeInAnyForm(local);
    expect(consume('k')).toMatchObject({ allowed: true });
    expect(consume('k')).toMatchObject({ allowed: false });
    const calls: unknown[] = [];
    const wrapper = { ...local, consume: (key: string, options?: unknown) => (calls.push([key, options]), local.consume(key)) } as Limiter;
    expect(consumeInAnyForm(wrapper)('w', { cost: 1 })).toMatchObject({ allowed: true });
    expect(calls).toEqual([['w', { cost: 1 }]]);
  });
});
