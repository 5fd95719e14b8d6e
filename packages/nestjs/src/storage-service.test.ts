import { type EvaluateRequest, memoryStore, RateKitOptionError } from '@ratekit/core';
import fc from 'fast-check';
import { ThrottlerStorageService } from './storage-service.js';
import type { ThrottlerStorageRecord } from './storage.js';

/** A storage on a clock the test moves. */
function storageAt(startMs = 1_700_000_000_000) {
  const clock = { nowMs: startMs };
  const storage = new ThrottlerStorageService({ store: memoryStore({ pruneIntervalMs: 0 }), now: () => clock.nowMs });
  const at = (offsetMs: number) => {
    clock.nowMs = startMs + offsetMs;
  };
  return { storage, at };
}

describe('ThrottlerStorageService: @nestjs/throttler semantics on a ratekit store', () => {
  it('counts hits in a window that starts at the first hit', async () => {
    const { storage, at } = storageAt();
    at(0);
    expect(await storage.increment('k', 10_000, 2, 10_000, 'default')).toEqual({ totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 });
    at(2_500);
    expect(await storage.increment('k', 10_000, 2, 10_000, 'default')).toEqual({ totalHits: 2, timeToExpire: 8, isBlocked: false, timeToBlockExpire: 0 });
    at(10_000); // the window [0, 10 s) has ended
    expect(await storage.increment('k', 10_000, 2, 10_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  // | t (s) | hit            | upstream record                  |
  // | 0, 0  | 1, 2           | allowed                          |
  // | 1     | 3 (over)       | blocked for 5 s, totalHits 3     |
  // | 5.9   | refused        | still blocked, 1 s left          |
  // | 6     | the block ends | the count starts again: 1        |
  it('blocks for blockDuration once over, then counts from zero though the window has not ended', async () => {
    const { storage, at } = storageAt();
    at(0);
    await storage.increment('k', 10_000, 2, 5_000, 'default');
    await storage.increment('k', 10_000, 2, 5_000, 'default');
    at(1_000);
    expect(await storage.increment('k', 10_000, 2, 5_000, 'default')).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 5 });
    at(5_900);
    expect(await storage.increment('k', 10_000, 2, 5_000, 'default')).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    at(6_000);
    expect(await storage.increment('k', 10_000, 2, 5_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
    expect(await storage.increment('k', 10_000, 2, 5_000, 'default')).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(await storage.increment('k', 10_000, 2, 5_000, 'default')).toMatchObject({ isBlocked: true });
  });

  it('while blocked, refuses every hit and counts none', async () => {
    const { storage, at } = storageAt();
    at(0);
    await storage.increment('k', 1_000, 1, 3_000, 'default');
    expect(await storage.increment('k', 1_000, 1, 3_000, 'default')).toMatchObject({ isBlocked: true, timeToBlockExpire: 3 });
    for (let t = 100; t < 3_000; t += 100) {
      at(t);
      expect((await storage.increment('k', 1_000, 1, 3_000, 'default')).isBlocked).toBe(true);
    }
    at(3_000);
    expect(await storage.increment('k', 1_000, 1, 3_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('with a blockDuration of 0, the hit over the limit starts the count again (as upstream)', async () => {
    const { storage, at } = storageAt();
    at(0);
    await storage.increment('k', 1_000, 1, 0, 'default');
    expect(await storage.increment('k', 1_000, 1, 0, 'default')).toEqual({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('keeps keys and throttler names apart', async () => {
    const { storage, at } = storageAt();
    at(0);
    await storage.increment('a', 1_000, 1, 1_000, 'default');
    expect((await storage.increment('a', 1_000, 1, 1_000, 'default')).isBlocked).toBe(true);
    expect((await storage.increment('b', 1_000, 1, 1_000, 'default')).isBlocked).toBe(false);
    expect((await storage.increment('a', 1_000, 1, 1_000, 'other')).isBlocked).toBe(false);
  });

  it('uses a bounded memory store by default and frees it on shutdown', async () => {
    const storage = new ThrottlerStorageService();
    expect(await storage.increment('k', 1_000, 5, 1_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
    storage.onApplicationShutdown();
  });

  it('takes a store directly', async () => {
    const store = memoryStore({ pruneIntervalMs: 0 });
    const storage = new ThrottlerStorageService(store);
    await storage.increment('k', 60_000, 5, 1_000, 'default');
    expect(store.size).toBe(1);
  });

  it('refuses bad options when it is built, naming them', () => {
    expect(() => new ThrottlerStorageService({ algorithm: 'leaky' as never })).toThrow(RateKitOptionError);
    expect(() => new ThrottlerStorageService({ algorithm: 'leaky' as never })).toThrow(/algorithm/);
    expect(() => new ThrottlerStorageService({ storeTimeoutMs: -1 })).toThrow(/storeTimeoutMs/);
    expect(() => new ThrottlerStorageService({ stor: memoryStore() } as never)).toThrow(/stor/);
    expect(() => new ThrottlerStorageService({ store: {} as never })).toThrow(/store/);
  });

  it.each([
    ['allow', { isBlocked: false }],
    ['deny', { isBlocked: true, timeToBlockExpire: 1 }],
  ] as const)("a failing store with onStoreError '%s' answers at once, reported, and blocks nothing", async (onStoreError, expected) => {
    const failing = { name: 'failing', shared: true, clock: 'server' as const, evaluate: () => Promise.reject(new Error('ECONNREFUSED')), resetKey: () => undefined };
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const storage = new ThrottlerStorageService({ store: failing, onStoreError });
      expect(await storage.increment('k', 60_000, 1, 60_000, 'default')).toMatchObject(expected);
      expect(await storage.increment('k', 60_000, 1, 60_000, 'default')).toMatchObject(expected);
      expect(errors).toHaveBeenCalledTimes(2);
    } finally {
      errors.mockRestore();
    }
  });

  it("a failing store with onStoreError 'throw' (the default) rejects", async () => {
    const failing = { name: 'failing', shared: true, clock: 'server' as const, evaluate: () => Promise.reject(new Error('ECONNREFUSED')), resetKey: () => undefined };
    await expect(new ThrottlerStorageService({ store: failing }).increment('k', 60_000, 1, 60_000, 'default')).rejects.toThrow(/ECONNREFUSED|store/);
  });

  it('refuses, when built, a store that cannot hold blocks (as @ratekit/synced says through assertSupports)', () => {
    const store = memoryStore({ pruneIntervalMs: 0 });
    const unblockable = {
      ...store,
      evaluate: store.evaluate,
      resetKey: store.resetKey,
      assertSupports: (limits: readonly { blockDurationMs: number }[], path: string) => {
        limits.forEach((limit, i) => {
          if (limit.blockDurationMs > 0) throw new RateKitOptionError(`${path}[${i}].blockDurationMs`, '0 (this store cannot block)', limit.blockDurationMs);
        });
      },
    };
    expect(() => new ThrottlerStorageService({ store: unblockable })).toThrow(/blockDurationMs/);
  });
});

describe('ThrottlerStorageService algorithms', () => {
  // | t (s) | fixed window (default)            | sliding log (upstream's memory storage) |
  // | 0, 9  | 1, 2 (window [0, 10 s))           | 1, 2                                    |
  // | 10.5  | new window: 1                     | the hit at 0 has expired: 2             |
  // | 10.6  | 2                                 | 3: over, blocked                        |
  it.each([
    ['fixed-window', false],
    ['sliding-log', true],
  ] as const)('%s: across a window boundary', async (algorithm, blockedAt10_6) => {
    const clock = { nowMs: 1_700_000_000_000 };
    const storage = new ThrottlerStorageService({ store: memoryStore({ pruneIntervalMs: 0 }), algorithm, now: () => clock.nowMs });
    const hitAt = (offsetMs: number) => {
      clock.nowMs = 1_700_000_000_000 + offsetMs;
      return storage.increment('k', 10_000, 2, 10_000, 'default');
    };
    await hitAt(0);
    expect(await hitAt(9_000)).toMatchObject({ totalHits: 2, isBlocked: false, timeToExpire: 1 });
    expect((await hitAt(10_500)).isBlocked).toBe(false);
    expect((await hitAt(10_600)).isBlocked).toBe(blockedAt10_6);
  });
});

describe('ThrottlerStorageService store calls', () => {
  /** A storage on a memory store whose evaluate calls are counted (a wrapped store: every call goes through evaluate). */
  function counted() {
    const store = memoryStore({ pruneIntervalMs: 0 });
    const modes: string[] = [];
    const storage = new ThrottlerStorageService({ store: { ...store, evaluate: (request: EvaluateRequest) => (modes.push(request.mode), store.evaluate(request)) } });
    return { storage, modes };
  }

  it('a block at least as long as ttl (the default: ttl): one call per hit, the hit that blocks and the blocked ones included', async () => {
    const { storage, modes } = counted();
    await storage.increment('k', 60_000, 1, 60_000, 'default');
    expect((await storage.increment('k', 60_000, 1, 60_000, 'default')).isBlocked).toBe(true); // over: blocks
    expect((await storage.increment('k', 60_000, 1, 60_000, 'default')).isBlocked).toBe(true); // blocked
    expect(modes).toEqual(['consume', 'consume', 'consume']);
  });

  it('a block shorter than ttl: the hit that blocks makes two more calls (block the gate, give the count back), the blocked ones one', async () => {
    const { storage, modes } = counted();
    await storage.increment('k', 60_000, 1, 5_000, 'default');
    expect((await storage.increment('k', 60_000, 1, 5_000, 'default')).isBlocked).toBe(true);
    expect((await storage.increment('k', 60_000, 1, 5_000, 'default')).isBlocked).toBe(true);
    expect(modes).toEqual(['consume', 'consume', 'consume', 'refund', 'consume']);
  });
});

/**
 * The storage's semantics, written plainly for one key: @nestjs/throttler's record, counted in a
 * fixed window from the key's first hit (difference 2 of docs/migrating/nestjs-throttler.md), with
 * `totalHits` of `limit + 1` while blocked (difference 3).
 */
class ReferenceStorage {
  private windowStartMs = -Infinity;
  private count = 0;
  private blockedUntilMs: number | undefined;
  constructor(
    private readonly ttl: number,
    private readonly limit: number,
    private readonly blockDuration: number,
  ) {}

  increment(nowMs: number): Partial<ThrottlerStorageRecord> {
    const seconds = (ms: number) => Math.ceil(ms / 1_000);
    if (this.blockedUntilMs !== undefined) {
      if (this.blockedUntilMs > nowMs) return { isBlocked: true, totalHits: this.limit + 1, timeToBlockExpire: seconds(this.blockedUntilMs - nowMs) };
      // The block has ended: the count starts again from zero, in the same window.
      this.blockedUntilMs = undefined;
      this.count = 0;
    }
    if (nowMs >= this.windowStartMs + this.ttl) {
      this.windowStartMs = nowMs;
      this.count = 0;
    }
    this.count++;
    if (this.count > this.limit) {
      // No block: the count starts again with this hit.
      if (this.blockDuration <= 0) this.count = 1;
      else {
        this.blockedUntilMs = nowMs + this.blockDuration;
        return { isBlocked: true, totalHits: this.limit + 1, timeToBlockExpire: seconds(this.blockDuration) };
      }
    }
    return { isBlocked: false, totalHits: this.count, timeToExpire: seconds(this.windowStartMs + this.ttl - nowMs) };
  }
}

describe('ThrottlerStorageService against its reference semantics (fast-check)', () => {
  it('every layout (one limit for a block of at least ttl, hits and gate otherwise) answers as the reference, hit by hit', async () => {
    const scenario = fc.record({
      ttl: fc.integer({ min: 1, max: 20 }).map((s) => s * 500),
      limit: fc.integer({ min: 1, max: 4 }),
      // Relative to ttl: none, shorter, as long, longer.
      blockShare: fc.constantFrom(0, 0.4, 1, 2.5),
      // Bursts (no time between hits), gaps within a window, gaps past windows and blocks.
      gapsMs: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_500 }), fc.integer({ min: 1_500, max: 30_000 })), { minLength: 1, maxLength: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ ttl, limit, blockShare, gapsMs }) => {
        const blockDuration = Math.round(ttl * blockShare);
        const clock = { nowMs: 1_700_000_000_000 };
        const storage = new ThrottlerStorageService({ store: memoryStore({ pruneIntervalMs: 0 }), now: () => clock.nowMs });
        const reference = new ReferenceStorage(ttl, limit, blockDuration);
        for (const gapMs of gapsMs) {
          clock.nowMs += gapMs;
          const expected = reference.increment(clock.nowMs);
          const actual = await storage.increment('k', ttl, limit, blockDuration, 'default');
          expect(actual).toMatchObject(expected);
        }
      }),
      { numRuns: 300 },
    );
  });
});
