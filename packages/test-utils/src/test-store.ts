import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type AlgorithmName, type Decision, type EvaluateMode, type LimitOptions, type MaybePromise, type RateLimitStore, type ResolvedLimit, resolveLimit } from '@ratekit/core';

/** Options of {@link testStore}. */
export interface TestStoreOptions {
  /** The store's name in the test titles, e.g. `redis (node-redis)`. */
  name: string;
  /** Makes the store under test, once, before the suite's tests. */
  makeStore: () => MaybePromise<RateLimitStore>;
  /**
   * The store's clock. With `caller` (the default) the suite drives time
   * through `nowMs` and checks every algorithm's timeline and expiry on
   * fixed clocks. With `server` it checks that `nowMs` is ignored and that a
   * short real window expires; the timelines are left to the caller-clock run.
   * @default 'caller'
   */
  clock?: 'caller' | 'server';
  /**
   * The store finds a key's states only from its policy: `resetKey` is
   * given the policy's limits (the contract allows it, and a limiter always
   * passes them), and the suite checks that it resets them all, other keys
   * and namespaces alone. Without it, `resetKey` gets no limits.
   * @default false
   */
  resetKeyNeedsLimits?: boolean;
  /** Called once after the suite. @default calls `store.dispose()` when there is one */
  disposeStore?: (store: RateLimitStore) => MaybePromise<void>;
  /** Registers store-specific tests inside the suite's `describe`. */
  additionalTests?: (context: StoreTestContext) => void;
}

/** What {@link TestStoreOptions.additionalTests} gets to write its own tests. */
export interface StoreTestContext {
  /** The store under test (inside tests and hooks only). */
  store(): RateLimitStore;
  /** A namespace no other test uses, so tests never see each other's state, even on a shared server. */
  namespace(): string;
  /** The suite's base time for caller clocks, Unix epoch ms (a multiple of 1,000). */
  readonly t0: number;
}

/** A request to the store with defaults: cost 1, `consume`, the suite's base time. */
export interface Ask {
  key?: string;
  namespace: string;
  limits: readonly ResolvedLimit[];
  cost?: number;
  mode?: EvaluateMode;
  nowMs?: number;
}

/** Base time of the fixed clocks: 2023-11-14T22:13:20Z, a multiple of 1,000 ms so window starts are predictable. */
export const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

/** Runs one decision on `store`, filling in the defaults of {@link Ask}. */
export function ask(store: RateLimitStore, request: Ask): Promise<Decision> {
  return Promise.resolve(
    store.evaluate({
      key: request.key ?? 'client',
      namespace: request.namespace,
      limits: request.limits,
      cost: request.cost ?? 1,
      mode: request.mode ?? 'consume',
      nowMs: request.nowMs ?? T0,
    }),
  );
}

/** The same request `times` times, each decision awaited before the next is asked. */
export async function askInTurn(store: RateLimitStore, request: Ask, times: number): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < times; i++) decisions.push(await ask(store, request));
  return decisions;
}

/** Validated limits, each named after its position unless named already. */
export function limits(...options: LimitOptions[]): readonly ResolvedLimit[] {
  return options.map((option, i) => resolveLimit(option, `limits[${i}]`));
}

/** A fresh namespace: unique per call and per process, so tests sharing a server never collide. */
export function freshNamespace(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/**
 * A row of an algorithm timeline: at `atMs` after the start, a request of
 * `cost` gets `allowed` with `remaining` whole tokens left; `retryAfterMs` and
 * `delayMs` are checked when given.
 */
export type TimelineRow = readonly [atMs: number, cost: number, allowed: boolean, remaining: number, retryAfterMs?: number, delayMs?: number];

/**
 * The timelines every store must reproduce, one per algorithm, on a limit of
 * 2 per 1,000 ms (delay: burst 1, at most 1,000 ms of delay). They follow the
 * algorithms of @ratekit/core; the in-memory store checks them too.
 */
export const ALGORITHM_TIMELINES: Readonly<Record<AlgorithmName, { limit: LimitOptions; rows: readonly TimelineRow[] }>> = {
  'fixed-window': {
    limit: { algorithm: 'fixed-window', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 1],
      [0, 1, true, 0],
      [999, 1, false, 0, 1],
      [1_000, 1, true, 1],
    ],
  },
  'sliding-window': {
    limit: { algorithm: 'sliding-window', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 1],
      [0, 1, true, 0],
      // Next window: the 2 previous requests weigh 2 × (1 − e/1000); one more fits at e = 500.
      [500, 1, false, 0, 1_000],
      [1_500, 1, true, 0],
    ],
  },
  'sliding-log': {
    limit: { algorithm: 'sliding-log', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 1],
      [100, 1, true, 0],
      [500, 1, false, 0, 500],
      [1_000, 1, true, 0],
      [1_099, 1, false, 0, 1],
    ],
  },
  'token-bucket': {
    limit: { algorithm: 'token-bucket', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 1],
      [0, 1, true, 0],
      [0, 1, false, 0, 500],
      [500, 1, true, 0],
      [1_500, 2, true, 0],
    ],
  },
  gcra: {
    limit: { algorithm: 'gcra', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 1],
      [0, 1, true, 0],
      [0, 1, false, 0, 500],
      [500, 1, true, 0],
      [1_500, 2, true, 0],
    ],
  },
  delay: {
    limit: { algorithm: 'delay', limit: 2, windowMs: 1_000 },
    rows: [
      [0, 1, true, 0, 0, 0],
      [0, 1, true, 0, 0, 500],
      [0, 1, true, 0, 0, 1_000],
      [0, 1, false, 0, 500, 0],
    ],
  },
};

/**
 * The block timeline every store must reproduce for every algorithm
 * (`blockDurationMs`, see {@link blockingLimit}): two admitted, the third
 * refused and blocked for 5,000 ms, refused (and charging nothing) while the
 * budget refills, admitted again when the block ends. Rows as in
 * {@link TimelineRow}; `resetMs` is checked by the suite on the refusals.
 */
export const BLOCK_TIMELINE: readonly TimelineRow[] = [
  [0, 1, true, 1],
  [0, 1, true, 0],
  [0, 1, false, 0, 5_000],
  [1_000, 1, false, 0, 4_000],
  [4_999, 1, false, 0, 1],
  [5_000, 1, true, 1],
];

/** The limit of {@link BLOCK_TIMELINE} for an algorithm: 2 per 1,000 ms (delay: burst 2, no delay), blocked 5,000 ms on a refusal. */
export function blockingLimit(algorithm: AlgorithmName): LimitOptions {
  return { algorithm, limit: 2, windowMs: 1_000, blockDurationMs: 5_000, ...(algorithm === 'delay' ? { burst: 2, maxDelayMs: 0 } : {}) };
}

/**
 * The store conformance suite: registers a jest `describe` of the behaviour
 * every {@link RateLimitStore} must have, whatever its backend.
 *
 * It covers counting, cost (fractional and above capacity), expiry, reset,
 * the peek and refund modes, all-or-nothing policies (a refusal charges no
 * limit), limit identity, namespace isolation against crafted keys,
 * concurrency (N + k concurrent requests at a limit of N: exactly k refused),
 * a timeline of every algorithm, and blocks (`blockDurationMs`) on every
 * algorithm and in multi-limit policies. Each test uses its own namespace.
 *
 * @example
 * ```ts
 * testStore({ name: 'memory', makeStore: () => memoryStore({ pruneIntervalMs: 0 }) });
 * ```
 */
export function testStore(options: TestStoreOptions): void {
  const clock = options.clock ?? 'caller';
  describe(`${options.name} store (conformance, ${clock} clock)`, () => {
    let current: RateLimitStore | undefined;
    const store = (): RateLimitStore => {
      if (current === undefined) throw new Error('The store is only available inside tests and hooks');
      return current;
    };
    beforeAll(async () => {
      current = await options.makeStore();
    }, 30_000);
    afterAll(async () => {
      if (current === undefined) return;
      if (options.disposeStore !== undefined) await options.disposeStore(current);
      else await current.dispose?.();
    }, 30_000);

    describe('its description', () => {
      it(`has a name and declares the ${clock} clock`, () => {
        expect(typeof store().name).toBe('string');
        expect(store().name.length).toBeGreaterThan(0);
        expect(typeof store().shared).toBe('boolean');
        expect(store().clock).toBe(clock);
      });
    });

    describe('counting', () => {
      it('admits exactly `limit` requests, then refuses without going below 0', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 3, windowMs: HOUR });
        const seen = await askInTurn(store(), { namespace, limits: policy }, 5);
        expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
        ]);
      });

      it('describes the decision: limit, policy name, cost, retryAfterMs and one entry per limit', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR, name: 'hourly' });
        const first = await ask(store(), { namespace, limits: policy });
        expect(first).toMatchObject({ allowed: true, limit: 1, remaining: 0, retryAfterMs: 0, delayMs: 0, cost: 1, policy: 'hourly' });
        expect(first.limits).toHaveLength(1);
        expect(first.limits[0]).toMatchObject({ name: 'hourly', algorithm: 'fixed-window', allowed: true, tokensPaid: 1 });
        const refused = await ask(store(), { namespace, limits: policy, nowMs: T0 + 1_000 });
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(HOUR);
        expect(refused.limits[0]!.tokensPaid).toBe(0);
      });

      it('counts each key separately', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR });
        expect((await ask(store(), { namespace, limits: policy, key: 'a' })).allowed).toBe(true);
        expect((await ask(store(), { namespace, limits: policy, key: 'a' })).allowed).toBe(false);
        expect((await ask(store(), { namespace, limits: policy, key: 'b' })).allowed).toBe(true);
      });
    });

    describe('cost', () => {
      it('charges the cost of each request and refuses a cost larger than what is left', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 5, windowMs: HOUR });
        const rows: Array<[number, boolean, number]> = [];
        for (const cost of [2, 2, 2, 1, 1]) {
          const d = await ask(store(), { namespace, limits: policy, cost });
          rows.push([cost, d.allowed, d.remaining]);
        }
        expect(rows).toEqual([
          [2, true, 3],
          [2, true, 1],
          [2, false, 1],
          [1, true, 0],
          [1, false, 0],
        ]);
      });

      it.each(['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra'] as const)(
        '%s: a cost above the capacity is refused with retryAfterMs Infinity and charges nothing',
        async (algorithm) => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm, limit: 3, windowMs: HOUR });
          const d = await ask(store(), { namespace, limits: policy, cost: 4 });
          expect(d.allowed).toBe(false);
          expect(d.retryAfterMs).toBe(Infinity);
          expect((await ask(store(), { namespace, limits: policy, cost: 3 })).allowed).toBe(true);
        },
      );

      it('keeps fractional costs and token counts exact', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 3, windowMs: HOUR });
        const a = await ask(store(), { namespace, limits: policy, cost: 0.25 });
        const b = await ask(store(), { namespace, limits: policy, cost: 1.5 });
        expect(a.limits[0]!.tokensAfter).toBe(2.75);
        expect(b.limits[0]!.tokensAfter).toBe(1.25);
        expect(b.remaining).toBe(1);
      });
    });

    describe('modes', () => {
      it('peek answers what consume would, and charges nothing', async () => {
        const namespace = freshNamespace();
        const policy = limits({ algorithm: 'gcra', limit: 2, windowMs: HOUR });
        await ask(store(), { namespace, limits: policy });
        const peeks = [];
        for (let i = 0; i < 3; i++) peeks.push(await ask(store(), { namespace, limits: policy, mode: 'peek' }));
        expect(peeks.map((d) => [d.allowed, d.remaining, d.limits[0]!.tokensPaid])).toEqual([
          [true, 1, 0],
          [true, 1, 0],
          [true, 1, 0],
        ]);
        expect((await ask(store(), { namespace, limits: policy })).remaining).toBe(0);
        const refusedPeek = await ask(store(), { namespace, limits: policy, mode: 'peek' });
        expect(refusedPeek.allowed).toBe(false);
        expect(refusedPeek.retryAfterMs).toBeGreaterThan(0);
      });

      it.each(['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra'] as const)('%s: refund gives the cost back, never beyond full', async (algorithm) => {
        const namespace = freshNamespace();
        const policy = limits({ algorithm, limit: 4, windowMs: HOUR });
        await ask(store(), { namespace, limits: policy, cost: 3 });
        const refunded = await ask(store(), { namespace, limits: policy, mode: 'refund', cost: 2 });
        expect(refunded).toMatchObject({ allowed: true, remaining: 3, cost: 0 });
        const overRefunded = await ask(store(), { namespace, limits: policy, mode: 'refund', cost: 10 });
        expect(overRefunded.remaining).toBe(4);
        expect((await ask(store(), { namespace, limits: policy, cost: 4 })).allowed).toBe(true);
        expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(false);
      });
    });

    describe(`reset${options.resetKeyNeedsLimits ? ' (given the policy)' : ''}`, () => {
      /** resetKey, given the policy's limits only when the store needs them. */
      const reset = (key: string, namespace: string, policy: readonly ResolvedLimit[]) => store().resetKey(key, namespace, options.resetKeyNeedsLimits ? policy : undefined);

      it('forgets every limit of the key in its namespace', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR, name: 'a' }, { algorithm: 'gcra', limit: 2, windowMs: HOUR, name: 'b' });
        await ask(store(), { namespace, limits: policy });
        expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(false);
        await reset('client', namespace, policy);
        const after = await ask(store(), { namespace, limits: policy });
        expect(after.allowed).toBe(true);
        expect(after.limits.map((l) => l.remaining)).toEqual([0, 1]);
      });

      it('forgets unnamed limits too, whichever policy used them', async () => {
        const namespace = freshNamespace();
        const window = { limit: 1, windowMs: HOUR };
        const bucket = { algorithm: 'gcra' as const, limit: 2, windowMs: HOUR };
        const policy = limits(window, bucket);
        await ask(store(), { namespace, limits: policy });
        await ask(store(), { namespace, limits: limits(bucket) });
        expect((await ask(store(), { namespace, limits: policy, mode: 'peek' })).limits.map((l) => l.remaining)).toEqual([0, 0]);
        await reset('client', namespace, policy);
        expect((await ask(store(), { namespace, limits: policy, mode: 'peek' })).limits.map((l) => l.remaining)).toEqual([1, 2]);
      });

      it('leaves other keys and other namespaces alone', async () => {
        const namespace = freshNamespace();
        const other = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR });
        await ask(store(), { namespace, limits: policy, key: 'a' });
        await ask(store(), { namespace, limits: policy, key: 'b' });
        await ask(store(), { namespace: other, limits: policy, key: 'a' });
        await reset('a', namespace, policy);
        expect((await ask(store(), { namespace, limits: policy, key: 'a' })).allowed).toBe(true);
        expect((await ask(store(), { namespace, limits: policy, key: 'b' })).allowed).toBe(false);
        expect((await ask(store(), { namespace: other, limits: policy, key: 'a' })).allowed).toBe(false);
      });

      it('is harmless on a key never seen', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR });
        await reset('never-seen', namespace, policy);
        expect((await ask(store(), { namespace, limits: policy, key: 'never-seen' })).remaining).toBe(0);
      });
    });

    describe('all-or-nothing policies', () => {
      it('a refusal by one limit charges no limit', async () => {
        const namespace = freshNamespace();
        const tight = { limit: 2, windowMs: HOUR, name: 'tight' };
        const loose = { algorithm: 'gcra' as const, limit: 5, windowMs: HOUR, name: 'loose' };
        const policy = limits(tight, loose);
        await ask(store(), { namespace, limits: policy });
        await ask(store(), { namespace, limits: policy });
        const refused = await ask(store(), { namespace, limits: policy });
        expect(refused.allowed).toBe(false);
        expect(refused.policy).toBe('tight');
        expect(refused.limits.map((l) => [l.allowed, l.remaining, l.tokensPaid])).toEqual([
          [false, 0, 0],
          [true, 3, 0],
        ]);
        // The loose limit alone still has 3: the refused request did not touch it.
        const alone = await ask(store(), { namespace, limits: limits(loose), mode: 'peek' });
        expect(alone.remaining).toBe(3);
      });

      it('charges every limit when all admit', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 4, windowMs: HOUR, name: 'a' }, { algorithm: 'sliding-log', limit: 6, windowMs: HOUR, name: 'b' });
        const d = await ask(store(), { namespace, limits: policy, cost: 3 });
        expect(d.limits.map((l) => [l.remaining, l.tokensPaid])).toEqual([
          [1, 3],
          [3, 3],
        ]);
        expect(d).toMatchObject({ allowed: true, remaining: 1, policy: 'a' });
      });

      it('reports as binding the refusing limit that clears last', async () => {
        const namespace = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR, name: 'hour' }, { limit: 1, windowMs: 2 * HOUR, name: 'two-hours' });
        await ask(store(), { namespace, limits: policy });
        const refused = await ask(store(), { namespace, limits: policy });
        expect(refused.policy).toBe('two-hours');
        expect(refused.retryAfterMs).toBeGreaterThan(HOUR);
      });

      it('keeps one state per limit identity: a named limit carries its usage across policies', async () => {
        const namespace = freshNamespace();
        const free = limits({ limit: 3, windowMs: HOUR, name: 'plan' });
        const paid = limits({ limit: 10, windowMs: HOUR, name: 'plan' });
        const unnamed = limits({ limit: 3, windowMs: HOUR });
        await ask(store(), { namespace, limits: free });
        await ask(store(), { namespace, limits: free });
        expect((await ask(store(), { namespace, limits: paid })).remaining).toBe(7);
        expect((await ask(store(), { namespace, limits: unnamed })).remaining).toBe(2);
      });
    });

    describe('isolation', () => {
      it('counts the same key separately in different namespaces', async () => {
        const a = freshNamespace();
        const b = freshNamespace();
        const policy = limits({ limit: 1, windowMs: HOUR });
        expect((await ask(store(), { namespace: a, limits: policy })).allowed).toBe(true);
        expect((await ask(store(), { namespace: b, limits: policy })).allowed).toBe(true);
        expect((await ask(store(), { namespace: a, limits: policy })).allowed).toBe(false);
      });

      it('a user key crafted to look like another namespace or key cannot reach it', async () => {
        const base = freshNamespace();
        const victim = { namespace: `${base}:api`, key: 'victim' };
        const policy = limits({ limit: 1, windowMs: HOUR });
        await ask(store(), { ...victim, limits: policy });
        expect((await ask(store(), { ...victim, limits: policy })).allowed).toBe(false);
        const ns = victim.namespace;
        const crafted: Array<{ namespace: string; key: string }> = [
          { namespace: '', key: `${ns}:victim` },
          { namespace: '', key: `${ns}\u0000victim` },
          { namespace: '', key: `${ns.length}:${ns}:victim` },
          { namespace: '', key: `{${ns.length}:${ns}:victim}` },
          { namespace: base, key: 'api:victim' },
          { namespace: `${base}:`, key: 'api:victim' },
          { namespace: `${ns}:`, key: 'victim' },
          { namespace: `${ns}:victim`, key: '' },
          { namespace: ns.slice(0, -1), key: `i:victim` },
          { namespace: ns, key: 'victim}' },
          { namespace: ns, key: '{victim}' },
          { namespace: ns, key: 'victim\u0000' },
          { namespace: ns, key: 'Victim' },
          { namespace: ns, key: ' victim' },
        ];
        for (const attacker of crafted) {
          const d = await ask(store(), { ...attacker, limits: policy });
          if (!d.allowed) throw new Error(`The crafted ${JSON.stringify(attacker)} reached the state of ${JSON.stringify(victim)}`);
        }
        // And none of them charged the victim... which stays refused, with its own state intact.
        const after = await ask(store(), { ...victim, limits: policy, mode: 'peek' });
        expect(after.allowed).toBe(false);
        // Each crafted key was charged once, on its own state.
        for (const attacker of crafted) expect((await ask(store(), { ...attacker, limits: policy, mode: 'peek' })).allowed).toBe(false);
      });
    });

    describe('concurrency', () => {
      const N = 20;
      const k = 7;
      const cases: Array<[string, LimitOptions[]]> = [
        ['fixed-window', [{ algorithm: 'fixed-window', limit: N, windowMs: HOUR }]],
        ['sliding-window', [{ algorithm: 'sliding-window', limit: N, windowMs: HOUR }]],
        ['sliding-log', [{ algorithm: 'sliding-log', limit: N, windowMs: HOUR }]],
        ['token-bucket', [{ algorithm: 'token-bucket', limit: N, windowMs: HOUR }]],
        ['gcra', [{ algorithm: 'gcra', limit: N, windowMs: HOUR }]],
        ['delay (burst N, no delay allowed)', [{ algorithm: 'delay', limit: N, windowMs: HOUR, burst: N, maxDelayMs: 0 }]],
        ['fixed-window with blockDurationMs', [{ algorithm: 'fixed-window', limit: N, windowMs: HOUR, blockDurationMs: HOUR }]],
        [
          'a two-limit policy',
          [
            { algorithm: 'gcra', limit: N, windowMs: HOUR, name: 'a' },
            { algorithm: 'fixed-window', limit: N + 3, windowMs: HOUR, name: 'b' },
          ],
        ],
      ];
      it.each(cases)(`%s: ${N} + ${k} concurrent requests at a limit of ${N} → exactly ${k} refused`, async (_, options) => {
        const namespace = freshNamespace();
        const policy = limits(...options);
        const decisions = await Promise.all(Array.from({ length: N + k }, () => ask(store(), { namespace, limits: policy })));
        expect(decisions.filter((d) => !d.allowed)).toHaveLength(k);
        const peek = await ask(store(), { namespace, limits: policy, mode: 'peek' });
        expect(peek.limits.map((l) => l.remaining)).toEqual(policy.map((l) => Math.max(0, l.limit - N)));
      });
    });

    if (clock === 'caller') {
      describe('every algorithm on a fixed clock', () => {
        it.each(Object.keys(ALGORITHM_TIMELINES) as AlgorithmName[])('%s follows its timeline', async (algorithm) => {
          const { limit, rows } = ALGORITHM_TIMELINES[algorithm];
          const namespace = freshNamespace();
          const policy = limits(limit);
          for (const [atMs, cost, allowed, remaining, retryAfterMs, delayMs] of rows) {
            const d = await ask(store(), { namespace, limits: policy, cost, nowMs: T0 + atMs });
            const seen = { atMs, allowed: d.allowed, remaining: d.remaining, retryAfterMs: d.retryAfterMs, delayMs: d.delayMs };
            const expected = { atMs, allowed, remaining, retryAfterMs: retryAfterMs ?? d.retryAfterMs, delayMs: delayMs ?? d.delayMs };
            if (retryAfterMs !== undefined) seen.retryAfterMs = round(seen.retryAfterMs);
            if (delayMs !== undefined) seen.delayMs = round(seen.delayMs);
            expect(seen).toEqual(expected);
          }
        });
      });

      describe('blocks (blockDurationMs)', () => {
        it.each(Object.keys(ALGORITHM_TIMELINES) as AlgorithmName[])('%s: a refusal blocks the key, whatever the budget does meanwhile', async (algorithm) => {
          const namespace = freshNamespace();
          const policy = limits(blockingLimit(algorithm));
          for (const [atMs, cost, allowed, remaining, retryAfterMs] of BLOCK_TIMELINE) {
            const d = await ask(store(), { namespace, limits: policy, cost, nowMs: T0 + atMs });
            const seen = { atMs, allowed: d.allowed, remaining: d.remaining, retryAfterMs: round(d.retryAfterMs), tokensPaid: d.limits[0]!.tokensPaid };
            expect(seen).toEqual({ atMs, allowed, remaining, retryAfterMs: retryAfterMs ?? seen.retryAfterMs, tokensPaid: allowed ? 1 : 0 });
            // Retry-After and the reset both report the block.
            if (!allowed) expect(round(d.resetMs)).toBe(retryAfterMs);
          }
        });

        it('a blocked key stays blocked for a peek, a refund and another refusal; resetKey lifts the block', async () => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm: 'gcra', limit: 1, windowMs: 1_000, blockDurationMs: 60_000 });
          await ask(store(), { namespace, limits: policy });
          expect((await ask(store(), { namespace, limits: policy })).retryAfterMs).toBe(60_000);
          const peek = await ask(store(), { namespace, limits: policy, mode: 'peek', nowMs: T0 + 10_000 });
          expect([peek.allowed, peek.remaining, peek.retryAfterMs]).toEqual([false, 0, 50_000]);
          await ask(store(), { namespace, limits: policy, mode: 'refund', nowMs: T0 + 10_000 });
          // Refused again during the block: the block is not extended.
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 20_000 })).retryAfterMs).toBe(40_000);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 59_999 })).allowed).toBe(false);
          await store().resetKey('client', namespace, policy);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 20_000 })).allowed).toBe(true);
        });

        it('in a two-limit policy, only the refusing limit is blocked and the refusal charges no limit', async () => {
          const namespace = freshNamespace();
          const burst = { algorithm: 'gcra' as const, limit: 1, windowMs: 1_000, blockDurationMs: 30_000, name: 'burst' };
          const hourly = { limit: 10, windowMs: HOUR, name: 'hourly' };
          const policy = limits(burst, hourly);
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
          const refused = await ask(store(), { namespace, limits: policy });
          expect(refused).toMatchObject({ allowed: false, policy: 'burst', retryAfterMs: 30_000, resetMs: 30_000, remaining: 0 });
          expect(refused.limits.map((l) => [l.allowed, l.remaining, l.tokensPaid])).toEqual([
            [false, 0, 0],
            [true, 9, 0],
          ]);
          const during = await ask(store(), { namespace, limits: policy, nowMs: T0 + 15_000 });
          expect([during.allowed, during.retryAfterMs]).toEqual([false, 15_000]);
          expect((await ask(store(), { namespace, limits: limits(hourly), mode: 'peek', nowMs: T0 + 15_000 })).remaining).toBe(9);
          const after = await ask(store(), { namespace, limits: policy, nowMs: T0 + 30_000 });
          expect(after.limits.map((l) => l.remaining)).toEqual([0, 8]);
        });

        it('property: after a refusal at t that starts a block, every consume in [t, t + blockDurationMs) is refused and charges nothing', async () => {
          await fc.assert(
            fc.asyncProperty(
              fc.constantFrom(...(Object.keys(ALGORITHM_TIMELINES) as AlgorithmName[])),
              fc.integer({ min: 1, max: 4 }),
              fc.integer({ min: 100, max: 5_000 }),
              fc.integer({ min: 1, max: 10_000 }),
              fc.array(fc.record({ dt: fc.integer({ min: 0, max: 2_000 }), cost: fc.constantFrom(1, 1, 2, 0.5) }), { minLength: 1, maxLength: 12 }),
              async (algorithm, limit, windowMs, blockDurationMs, requests) => {
                const namespace = freshNamespace('prop');
                const policy = limits({ algorithm, limit, windowMs, blockDurationMs, ...(algorithm === 'delay' ? { burst: limit } : {}) });
                let t = T0;
                let blockedUntil = -Infinity;
                for (const { dt, cost } of requests) {
                  t += dt;
                  const d = await ask(store(), { namespace, limits: policy, cost, nowMs: t });
                  if (t < blockedUntil) {
                    expect([d.allowed, d.remaining, d.limits[0]!.tokensPaid]).toEqual([false, 0, 0]);
                    if (d.retryAfterMs !== Infinity) expect(d.retryAfterMs).toBeGreaterThanOrEqual(blockedUntil - t - 1e-6);
                    // Nothing charged: a peek right after sees what the refusal reported.
                    const after = await ask(store(), { namespace, limits: policy, cost, mode: 'peek', nowMs: t });
                    expect([after.allowed, after.remaining, after.resetMs]).toEqual([false, 0, d.resetMs]);
                  } else if (!d.allowed) {
                    blockedUntil = t + blockDurationMs;
                    if (d.retryAfterMs !== Infinity) expect(d.retryAfterMs).toBeGreaterThanOrEqual(blockDurationMs);
                    expect(d.resetMs).toBeGreaterThanOrEqual(blockDurationMs - 1e-6);
                  }
                }
              },
            ),
            { numRuns: 25 },
          );
        }, 60_000);

        it('a block outlives the state it was stored with: an idle blocked key is not expired early', async () => {
          const namespace = freshNamespace();
          const policy = limits({ limit: 1, windowMs: 1_000, blockDurationMs: 30_000 });
          await ask(store(), { namespace, limits: policy });
          await ask(store(), { namespace, limits: policy });
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 29_000 })).allowed).toBe(false);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 30_000 })).allowed).toBe(true);
        });
      });

      describe('fractions', () => {
        it('survive the store: a rate of 3 per 1,000 ms gives a retry of 333.33… ms, not 333', async () => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm: 'gcra', limit: 3, windowMs: 1_000 });
          for (let i = 0; i < 3; i++) await ask(store(), { namespace, limits: policy });
          const refused = await ask(store(), { namespace, limits: policy });
          expect(refused.allowed).toBe(false);
          // Within 0.005 ms: times near 1.7e12 ms only hold steps of 2⁻¹² ms, but a truncated 333 is far off.
          expect(refused.retryAfterMs).toBeCloseTo(1_000 / 3, 2);
          const later = await ask(store(), { namespace, limits: policy, nowMs: T0 + 500 });
          expect(later.limits[0]!.tokensAfter).toBeCloseTo(0.5, 5);
        });
      });

      describe('expiry', () => {
        it('a fixed window opens again exactly when it ends', async () => {
          const namespace = freshNamespace();
          const policy = limits({ limit: 1, windowMs: 1_000 });
          await ask(store(), { namespace, limits: policy, nowMs: T0 });
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 999 })).allowed).toBe(false);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 1_000 })).allowed).toBe(true);
        });

        it.each(['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra', 'delay'] as const)('%s: an exhausted key left idle long enough is as good as new', async (algorithm) => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm, limit: 3, windowMs: 1_000, ...(algorithm === 'delay' ? { burst: 3, maxDelayMs: 0 } : {}) });
          for (let i = 0; i < 3; i++) await ask(store(), { namespace, limits: policy });
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(false);
          const later = await ask(store(), { namespace, limits: policy, nowMs: T0 + 10_000 });
          expect([later.allowed, later.remaining]).toEqual([true, 2]);
        });

        it('delay with refusedPenaltyCapMs: a refused consume reports the wait-until it stores (resetMs 7,000, as the peek after it), not the one before (6,000)', async () => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 5_000, refusedPenaltyCapMs: 10_000 });
          for (let i = 0; i < 6; i++) expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
          const before = await ask(store(), { namespace, limits: policy, mode: 'peek' });
          const refused = await ask(store(), { namespace, limits: policy });
          const after = await ask(store(), { namespace, limits: policy, mode: 'peek' });
          expect([before, refused, after].map((d) => [d.allowed, round(d.resetMs), round(d.retryAfterMs)])).toEqual([
            [false, 6_000, 2_000],
            [false, 7_000, 2_000],
            [false, 7_000, 3_000],
          ]);
        });

        it('delay with refusedPenaltyCapMs: a refusal still pushes the wait-until time (the one charge a refusal makes)', async () => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm: 'delay', limit: 1, windowMs: 1_000, maxDelayMs: 0, refusedPenaltyCapMs: 5_000 });
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 })).allowed).toBe(true);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 })).allowed).toBe(false);
          // Without the penalty this request would pass.
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 1_000 })).allowed).toBe(false);
          expect((await ask(store(), { namespace, limits: policy, nowMs: T0 + 3_000 })).allowed).toBe(true);
        });
      });
    } else {
      describe('the server clock', () => {
        it('ignores the caller clock: decisions carry the server time', async () => {
          const namespace = freshNamespace();
          const d = await ask(store(), { namespace, limits: limits({ limit: 1, windowMs: HOUR }), nowMs: 0 });
          // 2020-01-01: any real server clock is past it; the caller's 0 is not.
          expect(d.nowMs).toBeGreaterThan(1_577_836_800_000);
        });

        it('a short real window expires: refused, then admitted once retryAfterMs has passed', async () => {
          const namespace = freshNamespace();
          const policy = limits({ limit: 1, windowMs: 300 });
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
          const refused = await ask(store(), { namespace, limits: policy });
          expect(refused.allowed).toBe(false);
          expect(refused.retryAfterMs).toBeGreaterThan(0);
          expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
          await new Promise((resolve) => setTimeout(resolve, Math.ceil(refused.retryAfterMs) + 50));
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
        });

        it('a short real block holds, then lifts once its retryAfterMs has passed', async () => {
          const namespace = freshNamespace();
          const policy = limits({ algorithm: 'gcra', limit: 1, windowMs: 50, blockDurationMs: 400 });
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
          const refused = await ask(store(), { namespace, limits: policy });
          expect(refused.allowed).toBe(false);
          expect(refused.retryAfterMs).toBe(400);
          await new Promise((resolve) => setTimeout(resolve, 150));
          // The GCRA budget is back; the block is not.
          const during = await ask(store(), { namespace, limits: policy });
          expect(during.allowed).toBe(false);
          expect(during.retryAfterMs).toBeGreaterThan(0);
          expect(during.retryAfterMs).toBeLessThanOrEqual(300);
          await new Promise((resolve) => setTimeout(resolve, Math.ceil(during.retryAfterMs) + 50));
          expect((await ask(store(), { namespace, limits: policy })).allowed).toBe(true);
        });
      });
    }

    options.additionalTests?.({ store, namespace: () => freshNamespace(), t0: T0 });
  });
}

/** Rounds float noise away (to 1e-6 ms) so timeline rows can hold round numbers. */
function round(ms: number): number {
  return Number.isFinite(ms) ? Math.round(ms * 1e6) / 1e6 : ms;
}
