import diagnostics_channel from 'node:diagnostics_channel';
import { type DecisionEvent, type MemoryEvictEvent, type StoreErrorEvent, CHANNELS } from './events.js';
import { createLimiter } from './limiter.js';
import { sync } from './test-support/algorithms.js';
import { memoryStore } from './stores/memory.js';
import type { RateLimitStore } from './stores/types.js';

/** Collects what a channel publishes while `body` runs. */
async function collect<T>(name: string, body: () => unknown): Promise<T[]> {
  const seen: T[] = [];
  const listener = (message: unknown) => seen.push(message as T);
  diagnostics_channel.subscribe(name, listener);
  try {
    await body();
  } finally {
    diagnostics_channel.unsubscribe(name, listener);
  }
  return seen;
}

const failing: RateLimitStore = { name: 'broken', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('connection refused')), resetKey: () => undefined };

describe('diagnostics_channel events', () => {
  it('ratekit:decision: one event per decision, with the limiter prefix, key, policy, outcome and budget', async () => {
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000, name: 'per-second' }, prefix: 'api', now: () => 0 });
    const events = await collect<DecisionEvent>(CHANNELS.decision, () => {
      sync(limiter.consume('alice'));
      sync(limiter.consume('alice'));
    });
    expect(events.map(({ storeDurationMs, ...rest }) => rest)).toEqual([
      { prefix: 'api', key: 'alice', mode: 'consume', policy: 'per-second', allowed: true, cost: 1, remaining: 0, retryAfterMs: 0, store: 'memory', fallback: false, source: 'store' },
      { prefix: 'api', key: 'alice', mode: 'consume', policy: 'per-second', allowed: false, cost: 1, remaining: 0, retryAfterMs: 1_000, store: 'memory', fallback: false, source: 'store' },
    ]);
    expect(events.every((e) => e.storeDurationMs >= 0)).toBe(true);
  });

  it('publishes nothing, and returns the same decisions, when nobody subscribes', () => {
    const decide = () => createLimiter({ limits: { limit: 2, windowMs: 1_000 }, now: () => 0 });
    const a = decide();
    const b = decide();
    const plain = [a.consume('k'), a.consume('k'), a.consume('k')];
    expect(diagnostics_channel.hasSubscribers(CHANNELS.decision)).toBe(false);
    const listener = () => {};
    diagnostics_channel.subscribe(CHANNELS.decision, listener);
    const watched = [b.consume('k'), b.consume('k'), b.consume('k')];
    diagnostics_channel.unsubscribe(CHANNELS.decision, listener);
    expect(watched).toEqual(plain);
  });

  it('ratekit:store:error and a fallback decision when the store fails under onStoreError: allow', async () => {
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store: failing, onStoreError: 'allow', onError: () => {}, prefix: 'p', now: () => 0 });
    let decisions: DecisionEvent[] = [];
    const errors = await collect<StoreErrorEvent>(CHANNELS.storeError, async () => {
      decisions = await collect<DecisionEvent>(CHANNELS.decision, () => limiter.consume('k'));
    });
    expect(errors).toEqual([expect.objectContaining({ prefix: 'p', key: 'k', store: 'broken', onStoreError: 'allow', error: expect.objectContaining({ code: 'ERR_RATEKIT_STORE' }) })]);
    expect(decisions).toEqual([expect.objectContaining({ allowed: true, fallback: true, store: 'broken' })]);
  });

  it('ratekit:memory:evict: each key the LRU evicts, and whether it was kept aside', async () => {
    const limiter = createLimiter({ limits: { limit: 2, windowMs: 1_000 }, store: memoryStore({ maxKeys: 1, pruneIntervalMs: 0 }), now: () => 0 });
    const events = await collect<MemoryEvictEvent>(CHANNELS.memoryEvict, () => {
      sync(limiter.consume('fresh')); // 1 of 2 left: dropped when evicted
      sync(limiter.consume('spent', { cost: 2 }));
      sync(limiter.consume('next'));
    });
    expect(events).toEqual([
      { key: 'fresh', keptAside: false, size: 1 },
      { key: 'spent', keptAside: true, size: 2 },
    ]);
  });
});

describe('where the runtime has no node:diagnostics_channel', () => {
  const { getBuiltinModule } = process;
  afterEach(() => {
    process.getBuiltinModule = getBuiltinModule;
  });

  /** events.ts and the limiter, loaded afresh while `process.getBuiltinModule` is `replaced`. */
  function loadWith(replaced: typeof process.getBuiltinModule | undefined): { events: typeof import('./events.js'); limiter: typeof import('./limiter.js') } {
    (process as { getBuiltinModule?: unknown }).getBuiltinModule = replaced;
    let loaded: ReturnType<typeof loadWith> | undefined;
    jest.isolateModules(() => {
      loaded = { events: require('./events.js'), limiter: require('./limiter.js') };
    });
    process.getBuiltinModule = getBuiltinModule;
    return loaded!;
  }

  it('decides as usual with channels nobody can subscribe to (no process.getBuiltinModule: Node < 20.16, an edge runtime)', () => {
    const { events, limiter } = loadWith(undefined);
    expect(events.decisionChannel.hasSubscribers).toBe(false);
    const listener = jest.fn();
    diagnostics_channel.subscribe(CHANNELS.decision, listener);
    try {
      const made = limiter.createLimiter({ limits: { limit: 1, windowMs: 1_000 }, now: () => 0 });
      expect(sync(made.consume('k')).allowed).toBe(true);
      expect(sync(made.consume('k')).allowed).toBe(false);
      expect(events.decisionChannel.hasSubscribers).toBe(false);
    } finally {
      diagnostics_channel.unsubscribe(CHANNELS.decision, listener);
    }
    expect(listener).not.toHaveBeenCalled();
  });

  it('decides as usual when asking for the module throws (a runtime that refuses it)', () => {
    const { events, limiter } = loadWith(() => {
      throw new Error('No such built-in module: node:diagnostics_channel');
    });
    expect(events.storeErrorChannel.hasSubscribers).toBe(false);
    expect(sync(limiter.createLimiter({ limits: { limit: 1, windowMs: 1_000 }, now: () => 0 }).consume('k')).allowed).toBe(true);
  });

  it('publishes on the channels of process.getBuiltinModule where the runtime has it', () => {
    const { events } = loadWith(getBuiltinModule);
    const listener = jest.fn();
    diagnostics_channel.subscribe(CHANNELS.decision, listener);
    try {
      expect(events.decisionChannel.hasSubscribers).toBe(true);
    } finally {
      diagnostics_channel.unsubscribe(CHANNELS.decision, listener);
    }
  });
});
