import type { Decision } from './decision';
import type { LimitOptions } from './limit';
import { createLimiter, type Limiter } from './limiter';
import { stackLimiters } from './stack';
import { memoryStore } from './stores/memory';
import type { EvaluateRequest, MaybePromise, RateLimitStore } from './stores/types';

const T0 = 1_700_000_000_000;

function sync(result: MaybePromise<Decision>): Decision {
  expect(result).not.toBeInstanceOf(Promise);
  return result as Decision;
}

/** The memory store behind a Promise, recording what it was asked: stands in for a remote store. */
function asyncStore(): RateLimitStore & { modes: string[] } {
  const inner = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
  const modes: string[] = [];
  return {
    name: 'async',
    shared: true,
    clock: 'caller',
    modes,
    evaluate: async (request: EvaluateRequest) => {
      modes.push(request.mode);
      return inner.evaluate(request);
    },
    resetKey: async (key, namespace) => inner.resetKey(key, namespace),
  };
}

const perUser: LimitOptions = { limit: 5, windowMs: 60_000, name: 'user' };
const perRoute: LimitOptions = { algorithm: 'gcra', limit: 2, windowMs: 1_000, name: 'route' };

function limiterOf(limits: LimitOptions, store: RateLimitStore = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 })): Limiter {
  return createLimiter({ limits, store, now: () => T0 });
}

describe('stackLimiters', () => {
  describe('with in-memory limiters', () => {
    it('admits while every limiter admits, charging each', () => {
      const user = limiterOf(perUser);
      const route = limiterOf(perRoute);
      const stack = stackLimiters(user, route);
      const decision = sync(stack.consume(['alice', '/search']));
      expect(decision.allowed).toBe(true);
      expect(decision.limits.map((l) => [l.name, l.tokensPaid, l.remaining])).toEqual([
        ['user', 1, 4],
        ['route', 1, 1],
      ]);
      // Binding: the fewest tokens left.
      expect(decision).toMatchObject({ policy: 'route', remaining: 1, limit: 2, retryAfterMs: 0 });
    });

    it('refunds the first limiter when the second refuses, and reports nothing paid', () => {
      const user = limiterOf(perUser);
      const route = limiterOf(perRoute);
      const stack = stackLimiters(user, route);
      sync(stack.consume(['alice', '/search']));
      sync(stack.consume(['alice', '/search']));
      const decision = sync(stack.consume(['alice', '/search']));
      expect(decision).toMatchObject({ allowed: false, policy: 'route', retryAfterMs: 500 });
      expect(decision.limits.map((l) => [l.name, l.allowed, l.tokensPaid, l.remaining])).toEqual([
        ['user', true, 0, 3],
        ['route', false, 0, 0],
      ]);
      expect(sync(user.peek('alice')).remaining).toBe(3);
    });

    it('does not touch later limiters when an earlier one refuses', () => {
      const user = limiterOf({ ...perUser, limit: 1 });
      const route = limiterOf(perRoute);
      const stack = stackLimiters(user, route);
      sync(stack.consume(['alice', '/search']));
      expect(sync(stack.consume(['alice', '/search']))).toMatchObject({ allowed: false, policy: 'user' });
      expect(sync(route.peek('/search')).remaining).toBe(1);
    });

    it('peeks at every limiter, charging none', () => {
      const user = limiterOf(perUser);
      const route = limiterOf(perRoute);
      const stack = stackLimiters(user, route);
      expect(sync(stack.peek(['alice', '/search']))).toMatchObject({ allowed: true, remaining: 2 });
      expect(sync(stack.peek(['alice', '/search'], { cost: 3 }))).toMatchObject({ allowed: false, policy: 'route', retryAfterMs: Infinity });
      expect(sync(user.peek('alice')).remaining).toBe(5);
      expect(sync(route.peek('/search')).remaining).toBe(2);
    });

    it('runs on one shared store when the limiters have their own prefixes', () => {
      const store = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
      const user = createLimiter({ limits: perUser, store, prefix: 'user', now: () => T0 });
      const route = createLimiter({ limits: { ...perRoute, limit: 1 }, store, prefix: 'route', now: () => T0 });
      const stack = stackLimiters(user, route);
      expect(sync(stack.consume(['same-key', 'same-key'])).allowed).toBe(true);
      expect(sync(stack.consume(['same-key', 'same-key'])).allowed).toBe(false);
      expect(sync(user.peek('same-key')).remaining).toBe(4);
    });
  });

  describe('with an asynchronous store', () => {
    it('answers with a Promise and refunds the first limiter when the second refuses', async () => {
      const userStore = asyncStore();
      const user = limiterOf(perUser, userStore);
      const route = limiterOf(perRoute, asyncStore());
      const stack = stackLimiters(user, route);
      const first = stack.consume(['alice', '/search']);
      expect(first).toBeInstanceOf(Promise);
      await first;
      await stack.consume(['alice', '/search']);
      const refused = await stack.consume(['alice', '/search']);
      expect(refused).toMatchObject({ allowed: false, policy: 'route' });
      expect(refused.limits.map((l) => l.tokensPaid)).toEqual([0, 0]);
      expect(userStore.modes).toEqual(['consume', 'consume', 'consume', 'refund']);
      await expect(user.peek('alice')).resolves.toMatchObject({ remaining: 3 });
    });

    it('mixes an in-memory limiter with an asynchronous one', async () => {
      const user = limiterOf(perUser);
      const route = limiterOf({ ...perRoute, limit: 1 }, asyncStore());
      const stack = stackLimiters(user, route);
      await expect(stack.consume(['alice', '/search'])).resolves.toMatchObject({ allowed: true });
      await expect(stack.consume(['alice', '/search'])).resolves.toMatchObject({ allowed: false });
      expect(sync(user.peek('alice')).remaining).toBe(4);
      await expect(stack.peek(['alice', '/search'])).resolves.toMatchObject({ allowed: false, policy: 'route' });
    });
  });

  describe('when a limiter throws (its store failed, onStoreError is throw)', () => {
    /** A store whose every call fails, synchronously or with a rejected Promise. */
    function brokenStore(how: 'sync' | 'async'): RateLimitStore {
      const fail = () => {
        const error = new Error('store down');
        if (how === 'sync') throw error;
        return Promise.reject(error);
      };
      return { name: 'broken', shared: true, clock: 'caller', evaluate: fail, resetKey: fail };
    }

    it.each(['sync', 'async'] as const)('refunds the limiters already charged, then rethrows the error (%s failure)', async (how) => {
      const user = limiterOf(perUser);
      const account = limiterOf({ ...perUser, name: 'account' });
      const route = createLimiter({ limits: perRoute, store: brokenStore(how), now: () => T0 });
      const stack = stackLimiters(user, account, route);
      await expect(Promise.resolve().then(() => stack.consume(['alice', 'acme', '/search']))).rejects.toMatchObject({ code: 'ERR_RATEKIT_STORE' });
      // Nothing stays charged on the limiters before the failing one.
      expect(sync(user.peek('alice')).remaining).toBe(5);
      expect(sync(account.peek('acme')).remaining).toBe(5);
    });

    it('throws an AggregateError with every error when a refund fails as well, so no failure goes unseen', async () => {
      const memory = memoryStore({ maxKeys: 100, pruneIntervalMs: 0 });
      // Consumes work, refunds fail: the store died between the two calls.
      const dying: RateLimitStore = {
        ...memory,
        evaluate: (request: EvaluateRequest) => {
          if (request.mode === 'refund') throw new Error('store died');
          return memory.evaluate(request);
        },
      };
      const user = limiterOf(perUser, dying);
      const route = createLimiter({ limits: perRoute, store: brokenStore('sync'), now: () => T0 });
      const error = await Promise.resolve()
        .then(() => stackLimiters(user, route).consume(['alice', '/search']))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AggregateError);
      expect((error as AggregateError).errors.map((e: { code?: string }) => e.code)).toEqual(['ERR_RATEKIT_STORE', 'ERR_RATEKIT_STORE']);
      expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual([expect.stringContaining('store down'), expect.stringContaining('store died')]);
    });

    it('still refunds the earlier limiters when the failing one is reached after an asynchronous one', async () => {
      const user = limiterOf(perUser, asyncStore());
      const route = createLimiter({ limits: perRoute, store: brokenStore('async'), now: () => T0 });
      const stack = stackLimiters(user, route);
      await expect(stack.consume(['alice', '/search'])).rejects.toMatchObject({ code: 'ERR_RATEKIT_STORE' });
      await expect(user.peek('alice')).resolves.toMatchObject({ remaining: 5 });
    });
  });
});
