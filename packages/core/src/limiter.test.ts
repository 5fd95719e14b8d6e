import type { Decision } from './decision';
import { RateKitError, RateKitOptionError } from './errors';
import type { LimitOptions } from './limit';
import { createLimiter, type Limiter, type LimiterOptions } from './limiter';
import { memoryStore } from './stores/memory';
import type { EvaluateRequest, MaybePromise, RateLimitStore } from './stores/types';

const T0 = 1_700_000_000_000;

function sync(result: MaybePromise<Decision>): Decision {
  expect(result).not.toBeInstanceOf(Promise);
  return result as Decision;
}

/** A limiter on a small store without a prune timer, so fake-timer counts only see the limiter's own timers. */
function limiterOf<C = unknown>(limits: LimiterOptions<C>['limits'], rest: Partial<LimiterOptions<C>> = {}): Limiter<C> {
  return createLimiter<C>({ limits, store: memoryStore({ maxKeys: 100, pruneIntervalMs: 0 }), ...rest });
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<RateKitError> {
  try {
    await promise;
  } catch (error) {
    return error as RateKitError;
  }
  throw new Error('expected a rejection, the promise resolved');
}

const fiveAMinute: LimitOptions = { limit: 5, windowMs: 60_000 };

describe('createLimiter', () => {
  describe('on the in-memory store', () => {
    it('answers every operation with a plain value, never a Promise', () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      for (const result of [limiter.consume('k'), limiter.peek('k'), limiter.refund('k'), limiter.reset('k')]) {
        expect(result).not.toBeInstanceOf(Promise);
      }
      expect(limiter.consume('k')).toMatchObject({ allowed: true, remaining: 4 });
    });

    it('uses a fresh in-memory store when given none', () => {
      const limiter = createLimiter({ limits: fiveAMinute, now: () => T0 });
      expect(limiter.store.name).toBe('memory');
      expect(sync(limiter.consume('k')).remaining).toBe(4);
      (limiter.store.dispose as () => void)();
    });

    it.each<[string, unknown]>([
      ['null', null],
      ['an object without evaluate', {}],
      ['a number', 1],
    ])('refuses %s as the store with a RateKitOptionError naming `store`', (_, store) => {
      expect(() => createLimiter({ limits: fiveAMinute, store: store as RateLimitStore })).toThrow(
        expect.objectContaining({ name: 'RateKitOptionError', code: 'ERR_RATEKIT_INVALID_OPTION', option: 'store' }),
      );
    });
  });

  describe('consume', () => {
    it('charges each admitted call and refuses, charging nothing, once the quota is spent', () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      expect([1, 2, 3, 4, 5, 6].map(() => sync(limiter.consume('k')).remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      const refused = sync(limiter.consume('k'));
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 60_000 });
      expect(refused.limits[0]!.tokensPaid).toBe(0);
    });

    it('keeps keys apart', () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      sync(limiter.consume('a', { cost: 5 }));
      expect(sync(limiter.consume('b')).remaining).toBe(4);
    });

    it('reads the clock once per decision', () => {
      const now = jest.fn(() => T0);
      const limiter = limiterOf([fiveAMinute, { algorithm: 'gcra', limit: 2, windowMs: 1_000 }], { now });
      sync(limiter.consume('k'));
      expect(now).toHaveBeenCalledTimes(1);
    });
  });

  describe('peek', () => {
    it('answers what consume would, charging nothing', () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      sync(limiter.consume('k', { cost: 4 }));
      expect(sync(limiter.peek('k', { cost: 2 }))).toMatchObject({ allowed: false, remaining: 1 });
      expect(sync(limiter.peek('k'))).toMatchObject({ allowed: true, remaining: 1 });
      expect(sync(limiter.peek('k')).limits[0]!.tokensPaid).toBe(0);
      expect(sync(limiter.consume('k')).remaining).toBe(0);
    });
  });

  describe('refund', () => {
    it('gives the cost back', () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      sync(limiter.consume('k', { cost: 3 }));
      expect(sync(limiter.refund('k', { cost: 2 }))).toMatchObject({ allowed: true, remaining: 4 });
      expect(sync(limiter.peek('k')).remaining).toBe(4);
    });

    it('never gives back beyond full', () => {
      const limiter = limiterOf({ algorithm: 'token-bucket', limit: 5, windowMs: 1_000 }, { now: () => T0 });
      sync(limiter.consume('k'));
      expect(sync(limiter.refund('k', { cost: 10 })).remaining).toBe(5);
      expect(sync(limiter.refund('fresh', { cost: 3 })).remaining).toBe(5);
      expect([1, 2, 3, 4, 5, 6].map(() => sync(limiter.consume('k')).allowed)).toEqual([true, true, true, true, true, false]);
    });
  });

  describe('reset', () => {
    it("forgets only that key's state", () => {
      const limiter = limiterOf(fiveAMinute, { now: () => T0 });
      sync(limiter.consume('a', { cost: 5 }));
      sync(limiter.consume('b', { cost: 5 }));
      expect(limiter.reset('a')).toBeUndefined();
      expect(sync(limiter.peek('a')).remaining).toBe(5);
      expect(sync(limiter.peek('b')).remaining).toBe(0);
    });
  });

  describe('given limits chosen per request from a context', () => {
    type Ctx = { method: 'GET' | 'POST'; plan?: 'free' | 'paid' };
    const reads: LimitOptions = { limit: 100, windowMs: 60_000 };
    const writes: LimitOptions = { limit: 10, windowMs: 60_000 };

    it('keeps separate budgets for the limits of each kind of request', () => {
      const limiter = limiterOf<Ctx>((ctx) => (ctx.method === 'GET' ? reads : writes), { now: () => T0 });
      sync(limiter.consume('k', { context: { method: 'POST' }, cost: 10 }));
      expect(sync(limiter.consume('k', { context: { method: 'POST' } }))).toMatchObject({ allowed: false, limit: 10 });
      expect(sync(limiter.consume('k', { context: { method: 'GET' } }))).toMatchObject({ allowed: true, limit: 100, remaining: 99 });
    });

    it('validates a returned limit once and reuses it', () => {
      const limiter = limiterOf<Ctx>((ctx) => (ctx.method === 'GET' ? reads : writes), { now: () => T0 });
      expect(limiter.limitsFor({ method: 'GET' })).toBe(limiter.limitsFor({ method: 'GET' }));
      expect(limiter.limitsFor({ method: 'GET' })).not.toBe(limiter.limitsFor({ method: 'POST' }));
    });

    it('charges reads less than writes with a cost function', () => {
      const limiter = limiterOf<Ctx>(writes, { now: () => T0, cost: (ctx) => (ctx.method === 'GET' ? 1 : 5) });
      expect(sync(limiter.consume('k', { context: { method: 'GET' } })).remaining).toBe(9);
      expect(sync(limiter.consume('k', { context: { method: 'POST' } })).remaining).toBe(4);
      expect(sync(limiter.consume('k', { context: { method: 'POST' } })).allowed).toBe(false);
      expect(sync(limiter.consume('k', { context: { method: 'GET' } })).remaining).toBe(3);
    });

    it('lets a per-call cost override the cost function', () => {
      const limiter = limiterOf<Ctx>(writes, { now: () => T0, cost: () => 5 });
      expect(sync(limiter.consume('k', { context: { method: 'POST' }, cost: 2 }))).toMatchObject({ cost: 2, remaining: 8 });
      expect(sync(limiter.consume('k', { context: { method: 'POST' }, cost: 0 }))).toMatchObject({ allowed: true, cost: 0, remaining: 8 });
    });

    it('carries usage over a plan upgrade when both plans name their limit alike', () => {
      const free: LimitOptions = { limit: 10, windowMs: 60_000, name: 'plan' };
      const paid: LimitOptions = { limit: 100, windowMs: 60_000, name: 'plan' };
      const limiter = limiterOf<Ctx>((ctx) => (ctx.plan === 'paid' ? paid : free), { now: () => T0 });
      const freeCall = { context: { method: 'GET', plan: 'free' } as Ctx };
      for (let i = 0; i < 10; i++) expect(sync(limiter.consume('user', freeCall)).allowed).toBe(true);
      expect(sync(limiter.consume('user', freeCall))).toMatchObject({ allowed: false, policy: 'plan', limit: 10 });
      expect(sync(limiter.consume('user', { context: { method: 'GET', plan: 'paid' } }))).toMatchObject({ allowed: true, limit: 100, remaining: 89 });
    });
  });

  describe('wait', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    /** A gcra limiter of one call per 100 ms on the fake clock. */
    function oneEvery100Ms(): Limiter {
      jest.useFakeTimers({ now: T0 });
      return limiterOf({ algorithm: 'gcra', limit: 1, windowMs: 100 }, { now: () => Date.now() });
    }

    it('resolves at once, charged, when the budget allows the call now', async () => {
      const limiter = oneEvery100Ms();
      await expect(limiter.wait('k', { maxWaitMs: 0 })).resolves.toMatchObject({ allowed: true, nowMs: T0 });
      expect(sync(limiter.peek('k')).allowed).toBe(false);
    });

    it('resolves, charged, as soon as the budget allows the call', async () => {
      const limiter = oneEvery100Ms();
      sync(limiter.consume('k'));
      let settled: Decision | undefined;
      void limiter.wait('k', { maxWaitMs: 500 }).then((d) => (settled = d));
      await jest.advanceTimersByTimeAsync(99);
      expect(settled).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(settled).toMatchObject({ allowed: true, nowMs: T0 + 100 });
      expect(sync(limiter.peek('k'))).toMatchObject({ allowed: false, retryAfterMs: 100 });
    });

    it('rejects at once with ERR_RATEKIT_WAIT_TIMEOUT, charging nothing, when the wait would exceed maxWaitMs', async () => {
      const limiter = oneEvery100Ms();
      sync(limiter.consume('k'));
      const before = sync(limiter.peek('k'));
      const error = await rejection(limiter.wait('k', { maxWaitMs: 99 }));
      expect(error).toBeInstanceOf(RateKitError);
      expect(error.code).toBe('ERR_RATEKIT_WAIT_TIMEOUT');
      expect(error.message).toContain('in 100 ms, longer than maxWaitMs (99 ms); nothing was charged');
      expect(Date.now()).toBe(T0);
      expect(sync(limiter.peek('k'))).toEqual(before);
    });

    it('rejects with ERR_RATEKIT_NEVER_SATISFIABLE when the cost exceeds the capacity', async () => {
      const limiter = oneEvery100Ms();
      const error = await rejection(limiter.wait('k', { maxWaitMs: 60_000, cost: 2 }));
      expect(error.code).toBe('ERR_RATEKIT_NEVER_SATISFIABLE');
      expect(sync(limiter.peek('k')).remaining).toBe(1);
    });

    it('rejects with the signal reason, charging nothing and leaving no timer, when aborted while waiting', async () => {
      const limiter = oneEvery100Ms();
      sync(limiter.consume('k'));
      const before = sync(limiter.peek('k'));
      const controller = new AbortController();
      const waiting = rejection(limiter.wait('k', { maxWaitMs: 500, signal: controller.signal }));
      await jest.advanceTimersByTimeAsync(50);
      const reason = new Error('client went away');
      controller.abort(reason);
      expect(await waiting).toBe(reason);
      expect(jest.getTimerCount()).toBe(0);
      // Only the first call's charge: free again at T0 + 100, not T0 + 200.
      expect(before.retryAfterMs).toBe(100);
      expect(sync(limiter.peek('k'))).toMatchObject({ allowed: false, retryAfterMs: 50 });
    });

    it('rejects at once when the signal is already aborted', async () => {
      const limiter = oneEvery100Ms();
      const error = await rejection(limiter.wait('k', { maxWaitMs: 500, signal: AbortSignal.abort(new Error('gone')) }));
      expect(error.message).toBe('gone');
      expect(sync(limiter.peek('k')).remaining).toBe(1);
    });

    it('rejects naming maxWaitMs when it is not a duration', async () => {
      const limiter = oneEvery100Ms();
      const error = await rejection(limiter.wait('k', { maxWaitMs: -1 }));
      expect(error).toBeInstanceOf(RateKitOptionError);
      expect(error.message).toContain('`maxWaitMs`');
    });

    describe('with the delay algorithm', () => {
      /** One call per 100 ms, evenly spaced, held up to 300 ms. */
      function spaced(): Limiter {
        jest.useFakeTimers({ now: T0 });
        return limiterOf({ algorithm: 'delay', limit: 1, windowMs: 100, maxDelayMs: 300 }, { now: () => Date.now() });
      }

      it('holds the admitted call for its delay, then resolves', async () => {
        const limiter = spaced();
        sync(limiter.consume('k'));
        let settled: Decision | undefined;
        void limiter.wait('k', { maxWaitMs: 500 }).then((d) => (settled = d));
        await jest.advanceTimersByTimeAsync(99);
        expect(settled).toBeUndefined();
        await jest.advanceTimersByTimeAsync(1);
        expect(settled).toMatchObject({ allowed: true, delayMs: 100, nowMs: T0 });
      });

      it('refunds the charge and rejects with ERR_RATEKIT_WAIT_TIMEOUT when the delay exceeds maxWaitMs', async () => {
        const limiter = spaced();
        sync(limiter.consume('k'));
        const before = sync(limiter.peek('k'));
        const error = await rejection(limiter.wait('k', { maxWaitMs: 50 }));
        expect(error.code).toBe('ERR_RATEKIT_WAIT_TIMEOUT');
        expect(sync(limiter.peek('k'))).toEqual(before);
      });

      it('refunds the charge when aborted during the delay', async () => {
        const limiter = spaced();
        sync(limiter.consume('k'));
        const controller = new AbortController();
        const waiting = rejection(limiter.wait('k', { maxWaitMs: 500, signal: controller.signal }));
        await jest.advanceTimersByTimeAsync(40);
        const reason = new Error('stop');
        controller.abort(reason);
        expect(await waiting).toBe(reason);
        // Only the first call's charge is left: 60 ms of it remain.
        expect(sync(limiter.peek('k'))).toMatchObject({ resetMs: 60 });
        expect(sync(limiter.consume('k'))).toMatchObject({ allowed: true, delayMs: 60 });
      });

      it('refunds the charge and rejects when aborted while the store was answering', async () => {
        jest.useFakeTimers({ now: T0 });
        const inner = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
        const controller = new AbortController();
        const aborting: RateLimitStore = {
          name: 'aborting',
          shared: true,
          clock: 'caller',
          resetKey: async () => {},
          async evaluate(request) {
            const decision = inner.evaluate(request);
            if (request.mode === 'consume') controller.abort(new Error('stop'));
            return decision;
          },
        };
        const limiter = createLimiter({ limits: { algorithm: 'delay', limit: 1, windowMs: 100, maxDelayMs: 300 }, store: aborting, now: () => Date.now() });
        inner.evaluate({ key: 'k', namespace: '', limits: limiter.limitsFor(), cost: 1, mode: 'consume', nowMs: T0 });
        let outcome: unknown;
        limiter.wait('k', { maxWaitMs: 500, signal: controller.signal }).then(
          (d) => (outcome = d),
          (e: Error) => (outcome = e.message),
        );
        await jest.advanceTimersByTimeAsync(0);
        expect(outcome).toBe('stop');
        expect(inner.evaluate({ key: 'k', namespace: '', limits: limiter.limitsFor(), cost: 0, mode: 'peek', nowMs: T0 }).resetMs).toBe(100);
      });
    });

    describe('on a real clock', () => {
      it('waits in real time until the budget allows the call', async () => {
        const limiter = limiterOf({ algorithm: 'gcra', limit: 1, windowMs: 30 });
        const started = Date.now();
        sync(limiter.consume('k'));
        const decision = await limiter.wait('k', { maxWaitMs: 80 });
        expect(decision.allowed).toBe(true);
        expect(Date.now() - started).toBeGreaterThanOrEqual(29);
      });
    });
  });
});

describe('createLimiter store failures', () => {
  type Behaviour = 'reject' | 'hang' | 'throw';
  /** A remote-looking store whose every call fails the given way. */
  function brokenStore(behaviour: Behaviour, cause = new Error('connection refused')): RateLimitStore & { calls: EvaluateRequest[] } {
    const calls: EvaluateRequest[] = [];
    return {
      name: 'fake',
      shared: true,
      clock: 'caller',
      calls,
      evaluate(request) {
        calls.push(request);
        if (behaviour === 'throw') throw cause;
        if (behaviour === 'reject') return Promise.reject(cause);
        return new Promise<Decision>(() => {});
      },
      resetKey: async () => {},
    };
  }

  /** A working asynchronous store: the memory store behind a Promise. */
  function asyncStore(): RateLimitStore {
    const inner = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
    return { name: 'async', shared: true, clock: 'caller', evaluate: async (r) => inner.evaluate(r), resetKey: async (k, n) => inner.resetKey(k, n) };
  }

  it('answers with a Promise when the store is asynchronous', async () => {
    const limiter = createLimiter({ limits: fiveAMinute, store: asyncStore(), now: () => T0 });
    const result = limiter.consume('k');
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toMatchObject({ allowed: true, remaining: 4 });
  });

  it('answers with a Promise when the store answers with a thenable that is not a Promise', async () => {
    const inner = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
    const thenable = <T>(value: T) => ({ then: (resolve: (v: T) => unknown) => resolve(value) }) as unknown as Promise<T>;
    const store: RateLimitStore = { name: 'thenable', shared: true, clock: 'caller', evaluate: (r) => thenable(inner.evaluate(r)), resetKey: (k, n) => thenable(inner.resetKey(k, n)) };
    const limiter = createLimiter({ limits: fiveAMinute, store, now: () => T0, storeTimeoutMs: Infinity });
    const result = limiter.consume('k');
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toMatchObject({ allowed: true, remaining: 4 });
    await expect(limiter.reset('k')).resolves.toBeUndefined();
    expect(limiter.peek('k')).toBeInstanceOf(Promise);
    await expect(limiter.peek('k')).resolves.toMatchObject({ remaining: 5 });
  });

  describe("with onStoreError 'throw' (the default)", () => {
    it('rejects with ERR_RATEKIT_STORE carrying the original error', async () => {
      const cause = new Error('connection refused');
      const onError = jest.fn();
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('reject', cause), now: () => T0, onError });
      const error = await rejection(limiter.consume('k') as Promise<Decision>);
      expect(error).toBeInstanceOf(RateKitError);
      expect(error.code).toBe('ERR_RATEKIT_STORE');
      expect(error.message).toContain('The fake store failed: connection refused');
      expect(error.cause).toBe(cause);
      expect(onError).not.toHaveBeenCalled();
    });

    it('throws at once when the store throws synchronously', () => {
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('throw'), now: () => T0 });
      expect(() => limiter.consume('k')).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_STORE' }));
    });

    it('rejects once storeTimeoutMs has passed on a hanging store', async () => {
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('hang'), now: () => T0, storeTimeoutMs: 20 });
      const started = Date.now();
      const error = await rejection(limiter.consume('k') as Promise<Decision>);
      expect(error.code).toBe('ERR_RATEKIT_STORE');
      expect(error.message).toContain('The fake store did not answer within 20 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(19);
    });
  });

  describe("with onStoreError 'allow'", () => {
    it('fails open and hands the error to onError', async () => {
      const cause = new Error('connection refused');
      const onError = jest.fn();
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('reject', cause), now: () => T0, onStoreError: 'allow', onError });
      await expect(limiter.consume('k', { cost: 2 })).resolves.toMatchObject({ allowed: true, retryAfterMs: 0, cost: 2, limit: 5 });
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError.mock.calls[0]![0]).toMatchObject({ code: 'ERR_RATEKIT_STORE', cause });
    });

    it('fails open after storeTimeoutMs on a hanging store', async () => {
      jest.useFakeTimers({ now: T0 });
      try {
        const onError = jest.fn();
        const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('hang'), onStoreError: 'allow', storeTimeoutMs: 20, onError });
        let settled: Decision | undefined;
        void (limiter.consume('k') as Promise<Decision>).then((d) => (settled = d));
        await jest.advanceTimersByTimeAsync(19);
        expect(settled).toBeUndefined();
        await jest.advanceTimersByTimeAsync(1);
        expect(settled).toMatchObject({ allowed: true });
        expect(onError.mock.calls[0]![0].message).toContain('did not answer within 20 ms');
      } finally {
        jest.useRealTimers();
      }
    });

    it('answers synchronously when the store throws synchronously', () => {
      const onError = jest.fn();
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('throw'), now: () => T0, onStoreError: 'allow', onError });
      expect(sync(limiter.consume('k')).allowed).toBe(true);
      expect(onError).toHaveBeenCalledTimes(1);
    });
  });

  describe("with onStoreError 'deny'", () => {
    it('fails closed with a retry in one second and hands the error to onError', async () => {
      const onError = jest.fn();
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('reject'), now: () => T0, onStoreError: 'deny', onError });
      await expect(limiter.consume('k')).resolves.toMatchObject({ allowed: false, retryAfterMs: 1_000, nowMs: T0 });
      expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_RATEKIT_STORE' }));
    });
  });

  describe('with a fallback limiter', () => {
    it('decides with the fallback, which keeps its own count, and hands the error to onError', async () => {
      const fallback = limiterOf(fiveAMinute, { now: () => T0 });
      const onError = jest.fn();
      const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('reject'), now: () => T0, onStoreError: fallback, onError });
      await expect(limiter.consume('k', { cost: 2 })).resolves.toMatchObject({ allowed: true, remaining: 3 });
      await expect(limiter.peek('k')).resolves.toMatchObject({ remaining: 3 });
      await expect(limiter.refund('k')).resolves.toMatchObject({ remaining: 4 });
      expect(sync(fallback.peek('k')).remaining).toBe(4);
      expect(onError).toHaveBeenCalledTimes(3);
    });
  });

  describe('with no onError', () => {
    it('reports the handled error on console.error rather than swallowing it', async () => {
      const spy = jest.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const limiter = createLimiter({ limits: fiveAMinute, store: brokenStore('reject'), now: () => T0, onStoreError: 'allow' });
        await limiter.consume('k');
        expect(spy).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_RATEKIT_STORE' }));
      } finally {
        spy.mockRestore();
      }
    });
  });
});

describe('createLimiter with a store that cannot run every algorithm', () => {
  const picky = (): RateLimitStore => {
    const inner = memoryStore({ maxKeys: 16, pruneIntervalMs: 0 });
    return {
      ...inner,
      evaluate: (request) => inner.evaluate(request),
      resetKey: (key, namespace) => inner.resetKey(key, namespace),
      assertSupports(limits, path) {
        limits.forEach((limit, i) => {
          if (limit.algorithm === 'sliding-log') throw new RateKitOptionError(`${path}[${i}].algorithm`, 'not sliding-log', limit.algorithm);
        });
      },
    };
  };

  it('throws when built, naming the limit, for static limits', () => {
    expect(() =>
      createLimiter({
        limits: [
          { limit: 1, windowMs: 1_000 },
          { algorithm: 'sliding-log', limit: 1, windowMs: 1_000 },
        ],
        store: picky(),
      }),
    ).toThrow('Expected `limits[1].algorithm` to be not sliding-log, got "sliding-log"');
  });

  it('checks a dynamic set once, the first time the function returns it', () => {
    const store = picky();
    const spy = jest.spyOn(store, 'assertSupports');
    const reads = { limit: 5, windowMs: 1_000 };
    const limiter = createLimiter({ limits: () => reads, store });
    sync(limiter.consume('a'));
    sync(limiter.consume('b'));
    expect(spy).toHaveBeenCalledTimes(1);
  });
});

describe('limiter.reset on a failing store', () => {
  const hanging = (): RateLimitStore => ({
    name: 'hanging',
    shared: true,
    clock: 'caller',
    evaluate: () => new Promise<Decision>(() => {}),
    resetKey: () => new Promise<void>(() => {}),
  });

  it("rejects with ERR_RATEKIT_STORE after storeTimeoutMs under 'throw'", async () => {
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: hanging(), storeTimeoutMs: 20 });
    await expect(limiter.reset('k')).rejects.toMatchObject({ code: 'ERR_RATEKIT_STORE' });
  });

  it("resolves after storeTimeoutMs and reports the error under 'allow'", async () => {
    const onError = jest.fn();
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: hanging(), storeTimeoutMs: 20, onStoreError: 'allow', onError });
    await expect(limiter.reset('k')).resolves.toBeUndefined();
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: 'ERR_RATEKIT_STORE' }));
  });

  it('passes the policy limits to the store, so stores that cannot list a key find its state', () => {
    const store = memoryStore({ maxKeys: 16, pruneIntervalMs: 0 });
    const spy = jest.spyOn(store, 'resetKey');
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, prefix: 'p' });
    expect(limiter.reset('k')).toBeUndefined();
    expect(spy).toHaveBeenCalledWith('k', 'p', limiter.limitsFor());
  });
});

describe('storeTimeoutMs: Infinity', () => {
  it('means no timeout: a slow store is waited for, not failed', async () => {
    jest.useFakeTimers();
    try {
      const inner = memoryStore();
      let answer: (() => void) | undefined;
      const slow: RateLimitStore = { ...inner, name: 'slow', evaluate: (request) => new Promise((resolve) => (answer = () => resolve(inner.evaluate(request)))) };
      const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: slow, storeTimeoutMs: Infinity, now: () => 0 });
      const pending = limiter.consume('k') as Promise<Decision>;
      jest.advanceTimersByTime(2 ** 31);
      answer!();
      await expect(pending).resolves.toMatchObject({ allowed: true });
    } finally {
      jest.useRealTimers();
    }
  });
});
