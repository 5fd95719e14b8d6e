// Options, checked on Node (Deno KV itself is tested on Deno: store.deno.test.ts).
import { createLimiter, RateKitError, RateKitOptionError, resolveLimit } from '@ratekit/core';
import { type DenoKvLike, denoKvStore } from './store.js';

const fakeKv: DenoKvLike = {
  getMany: async () => [],
  list: async function* () {},
  atomic: () => {
    throw new Error('not used');
  },
};

describe('denoKvStore options', () => {
  it.each([
    ['no kv', undefined],
    ['a path', '/tmp/kv.sqlite3'],
    ['an object without atomic()', { getMany: () => [], list: () => [] }],
  ])('throws a coded option error for %s as kv', (_, kv) => {
    expect(() => denoKvStore({ kv: kv as never })).toThrow(RateKitOptionError);
    expect(() => denoKvStore({ kv: kv as never })).toThrow(/Expected `kv` to be a Deno KV database/);
  });

  it.each([
    ['a string', 'ratekit'],
    ['an array holding an object', ['ratekit', {}]],
  ])('refuses %s as the prefix', (_, prefix) => {
    expect(() => denoKvStore({ kv: fakeKv, prefix: prefix as never })).toThrow(/Expected `prefix` to be an array of Deno KV key parts/);
  });

  it.each([0, 1.5, -1])('refuses maxAttempts %p', (maxAttempts) => {
    expect(() => denoKvStore({ kv: fakeKv, maxAttempts })).toThrow(/Expected `maxAttempts` to be an integer >= 1/);
  });

  it.each([
    ['a number', 5],
    ['a negative baseMs', { baseMs: -1, maxMs: 10 }],
    ['maxMs below baseMs', { baseMs: 10, maxMs: 5 }],
  ])('refuses %s as backoffMs', (_, backoffMs) => {
    expect(() => denoKvStore({ kv: fakeKv, backoffMs: backoffMs as never })).toThrow(RateKitOptionError);
    expect(() => denoKvStore({ kv: fakeKv, backoffMs: backoffMs as never })).toThrow(/Expected `backoffMs/);
  });

  it('refuses a negative ttlSlackMs', () => {
    expect(() => denoKvStore({ kv: fakeKv, ttlSlackMs: -1 })).toThrow(/Expected `ttlSlackMs`/);
  });

  it('describes itself: shared, on the caller clock, keys as arrays of parts', () => {
    const store = denoKvStore({ kv: fakeKv, prefix: ['app', 1] });
    expect([store.name, store.shared, store.clock]).toEqual(['deno-kv', true, 'caller']);
    // Separate parts: a key holding the separator of a joined string cannot reach another namespace.
    expect(store.keyFor('a:b', 'ns', 'perSecond')).toEqual(['app', 1, 'ns', 'a:b', 'perSecond']);
  });
});

describe('denoKvStore failures', () => {
  /** A database where every commit loses its race (another writer always got there first). */
  const alwaysRaced: DenoKvLike = {
    getMany: async (keys) => keys.map((key) => ({ key, value: null, versionstamp: null })),
    list: async function* () {},
    atomic() {
      const operation = { check: () => operation, set: () => operation, delete: () => operation, commit: async () => ({ ok: false }) };
      return operation;
    },
  };

  it('gives up after maxAttempts lost races with ERR_RATEKIT_STORE, which the limiter hands to onStoreError', async () => {
    let commits = 0;
    const counting: DenoKvLike = {
      ...alwaysRaced,
      atomic() {
        commits++;
        return alwaysRaced.atomic();
      },
    };
    const errors: unknown[] = [];
    const limiter = createLimiter({ limits: [{ limit: 5, windowMs: 1_000 }], store: denoKvStore({ kv: counting, maxAttempts: 3 }), onStoreError: 'deny', onError: (error) => errors.push(error) });
    const decision = await limiter.consume('k');
    expect(decision.allowed).toBe(false);
    expect(commits).toBe(3);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RateKitError);
    expect((errors[0] as RateKitError).code).toBe('ERR_RATEKIT_STORE');
    expect((errors[0] as Error).message).toMatch(/lost 3 compare-and-set races in a row on key "k"/);
  });

  /** A database whose first `failures` commits throw `error`, and whose later commits apply. */
  function throwing(failures: number, error: Error): DenoKvLike & { commits: number } {
    const db = {
      commits: 0,
      getMany: alwaysRaced.getMany,
      list: alwaysRaced.list,
      atomic() {
        const operation = {
          check: () => operation,
          set: () => operation,
          delete: () => operation,
          commit: async () => {
            db.commits++;
            if (db.commits <= failures) throw error;
            return { ok: true };
          },
        };
        return operation;
      },
    };
    return db;
  }
  const locked = () => new Error('database is locked');
  const noWait = { baseMs: 0, maxMs: 0 };

  it('retries a commit that throws "database is locked" (another connection held the lock) and decides', async () => {
    const kv = throwing(3, locked());
    const limiter = createLimiter({ limits: [{ limit: 5, windowMs: 1_000 }], store: denoKvStore({ kv, backoffMs: noWait }), onStoreError: 'throw' });
    const decision = await limiter.consume('k');
    expect(decision.allowed).toBe(true);
    expect(kv.commits).toBe(4);
  });

  it('counts lock errors against maxAttempts, and says so when it gives up', async () => {
    const kv = throwing(Infinity, locked());
    const store = denoKvStore({ kv, maxAttempts: 4, backoffMs: noWait });
    const request = { key: 'k', namespace: '', limits: [resolveLimit({ limit: 5, windowMs: 1_000 }, 'limits[0]')], cost: 1, mode: 'consume' as const, nowMs: 0 };
    await expect(store.evaluate(request)).rejects.toThrow(/lost 4 compare-and-set races in a row on key "k" \(4 of them to "database is locked"\)/);
    expect(kv.commits).toBe(4);
  });

  it('fails at once on any other error, with the original as its cause', async () => {
    const original = new Error('disk I/O error');
    const kv = throwing(Infinity, original);
    const store = denoKvStore({ kv, backoffMs: noWait });
    const request = { key: 'k', namespace: '', limits: [resolveLimit({ limit: 5, windowMs: 1_000 }, 'limits[0]')], cost: 1, mode: 'consume' as const, nowMs: 0 };
    const error = await store.evaluate(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateKitError);
    expect((error as RateKitError).code).toBe('ERR_RATEKIT_STORE');
    expect((error as Error).cause).toBe(original);
    expect(kv.commits).toBe(1);
  });

  it('waits a jittered, exponentially capped backoff between attempts', async () => {
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const timeout = jest.spyOn(globalThis, 'setTimeout');
    try {
      const store = denoKvStore({ kv: alwaysRaced, maxAttempts: 8, backoffMs: { baseMs: 1, maxMs: 8 } });
      const request = { key: 'k', namespace: '', limits: [resolveLimit({ limit: 5, windowMs: 1_000 }, 'limits[0]')], cost: 1, mode: 'consume' as const, nowMs: 0 };
      await expect(store.evaluate(request)).rejects.toThrow(/lost 8 compare-and-set races/);
      // Before attempts 2..8: half of min(8, 1, 2, 4, 8, 16, ...).
      expect(timeout.mock.calls.map((call) => call[1])).toEqual([0.5, 1, 2, 4, 4, 4, 4]);
    } finally {
      random.mockRestore();
      timeout.mockRestore();
    }
  });

  it('rejects a value it did not write instead of deciding on it', async () => {
    const foreign: DenoKvLike = { ...alwaysRaced, getMany: async (keys) => keys.map((key) => ({ key, value: 'hello', versionstamp: '01' })) };
    const store = denoKvStore({ kv: foreign });
    const request = { key: 'k', namespace: '', limits: [resolveLimit({ limit: 5, windowMs: 1_000 }, 'limits[0]')], cost: 1, mode: 'consume' as const, nowMs: 0 };
    await expect(store.evaluate(request)).rejects.toThrow(/holds a value this store did not write/);
  });
});
