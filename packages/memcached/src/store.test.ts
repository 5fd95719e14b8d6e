import { createLimiter, type LimitOptions, RateKitError, RateKitOptionError, type ResolvedLimit } from '@ratekit/core';
import { ask, describeWithService, findBinary, freshNamespace, inCI, type LocalMemcached, limits, memcachedService, startMemcached, T0, testDifferential, testStore } from '@ratekit/test-utils';
import { testRefusalCacheDifferential } from '@ratekit/test-utils';
import { createConnection } from 'node:net';
import { MemcachedClient, parseServer } from './client.js';
import { decodeWindow } from './codec.js';
import { KeySpace } from './keys.js';
import { type MemcachedStore, type MemcachedStoreOptions, memcachedStore } from './store.js';

const HOUR = 3_600_000;

/**
 * The tests drive fixed clocks far ahead of real time, so they keep items a
 * minute past their state's end: a loaded machine pausing a test for a
 * second must not let Memcached expire a state the fixed clock still needs.
 */
const TEST_SLACK_MS = 60_000;

const open = (servers: string, options: MemcachedStoreOptions = {}) => memcachedStore({ servers, ttlSlackMs: TEST_SLACK_MS, prefix: 'ratekit-test:', ...options });

/** An item of the store, found the way the store finds it. */
interface Item {
  readonly key: string;
  readonly route: number;
}

/** A raw connection to the same servers, to inspect and tamper with items, and to read server stats. */
class Raw {
  readonly client: MemcachedClient;
  private readonly keys = new KeySpace('ratekit-test:');
  private readonly addresses;

  constructor(servers: string) {
    this.addresses = servers.split(',').map(parseServer);
    this.client = new MemcachedClient({ servers: this.addresses, timeoutMs: 2_000, connections: 1, reconnectDelayMs: 0 });
  }

  /** A window counter (`f`, `s0`, `s1`) or the bucket item (`b`) of (namespace, key). */
  item(namespace: string, key: string, kind: 'b' | 'f' | 's0' | 's1', limit?: ResolvedLimit): Item {
    const base = this.keys.base(namespace, key);
    return { key: this.keys.item(base, kind, limit?.id), route: base.route };
  }

  async value(item: Item): Promise<string | undefined> {
    const reply = await this.client.send(item.route, `mg ${item.key} v`);
    return reply.code === 'VA' ? reply.value : undefined;
  }

  async set(item: Item, value: string): Promise<void> {
    await this.client.send(item.route, `ms ${item.key} ${value.length} T60`, value);
  }

  /** Server counters (`stats`, text protocol), summed over the servers. */
  async stats(): Promise<Record<string, number>> {
    const all = await Promise.all(this.addresses.map((address) => statsOf(address.host, address.port)));
    const sum: Record<string, number> = {};
    for (const stats of all) for (const [name, value] of Object.entries(stats)) sum[name] = (sum[name] ?? 0) + value;
    return sum;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

function statsOf(host: string, port: number): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    let text = '';
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (!text.endsWith('END\r\n')) return;
      socket.destroy();
      const stats: Record<string, number> = {};
      for (const match of text.matchAll(/^STAT (\S+) (\d+)\r$/gm)) stats[match[1]!] = Number(match[2]);
      resolve(stats);
    });
    socket.write('stats\r\n');
  });
}

const raw = (servers: string) => new Raw(servers);

/** Memcached stats deltas of `run`. */
async function commandsOf(admin: Raw, run: () => Promise<unknown>): Promise<Record<string, number>> {
  const names = ['incr_hits', 'incr_misses', 'decr_hits', 'cmd_get', 'cmd_set', 'cas_hits', 'cas_badval', 'delete_hits'];
  const before = await admin.stats();
  await run();
  const after = await admin.stats();
  const delta: Record<string, number> = {};
  for (const name of names) if ((after[name] ?? 0) !== (before[name] ?? 0)) delta[name] = (after[name] ?? 0) - (before[name] ?? 0);
  return delta;
}

describe('memcachedStore options', () => {
  it.each<[string, MemcachedStoreOptions, RegExp]>([
    ['an empty server list', { servers: [] }, /`servers` to be a non-empty list of "host:port" strings/],
    ['a server with a bad port', { servers: ['localhost:99999'] }, /`servers\[0\]` to be a "host:port", "\[ipv6\]:port" or "host" string, got "localhost:99999"/],
    ['a prefix with a space', { prefix: 'rate kit:' }, /`prefix` to be printable ASCII without spaces, at most 100 characters/],
    ['a prefix of 101 characters', { prefix: 'p'.repeat(101) }, /`prefix` to be printable ASCII without spaces/],
    ['a timeout of 0', { timeoutMs: 0 }, /`timeoutMs` to be a positive finite number of milliseconds, got 0/],
    ['0 connections', { connections: 0 }, /`connections` to be an integer >= 1, got 0/],
    ['1.5 attempts', { maxAttempts: 1.5 }, /`maxAttempts` to be an integer >= 1, got 1.5/],
    ['a negative TTL slack', { ttlSlackMs: -1 }, /`ttlSlackMs` to be a finite number >= 0 of milliseconds, got -1/],
    ['a negative reconnect delay', { reconnectDelayMs: -5 }, /`reconnectDelayMs` to be a finite number >= 0 of milliseconds, got -5/],
  ])('throws a coded option error for %s', (_, options, message) => {
    expect(() => memcachedStore(options)).toThrow(RateKitOptionError);
    expect(() => memcachedStore(options)).toThrow(message);
  });

  it('takes servers as a list or as a comma-separated string, IPv6 in brackets, port 11211 by default', async () => {
    const store = memcachedStore({ servers: '10.0.0.1:11311, cache.internal,[::1]:11212' });
    expect(store.servers).toEqual([
      { host: '10.0.0.1', port: 11311 },
      { host: 'cache.internal', port: 11211 },
      { host: '::1', port: 11212 },
    ]);
    await store.dispose();
  });

  it('describes itself: shared, on the caller clock (Memcached has none to read)', async () => {
    const store = memcachedStore();
    expect([store.name, store.shared, store.clock, store.prefix]).toEqual(['memcached', true, 'caller', 'ratekit:']);
    await store.dispose();
  });
});

describeWithService(memcachedService, 'memcachedStore on a real Memcached', (server) => {
  testStore({
    name: 'memcached',
    makeStore: () => open(server().url),
    additionalTests: ({ store, namespace }) => {
      let admin: Raw;
      beforeAll(() => {
        admin = raw(server().url);
      });
      afterAll(() => admin.close());
      const memcached = () => store() as MemcachedStore;

      describe('window counters', () => {
        it('keep a fixed window in one number, window start × 2²² + count, incremented in place', async () => {
          const ns = namespace();
          const [limit] = limits({ limit: 10, windowMs: HOUR });
          await ask(memcached(), { namespace: ns, limits: [limit!], nowMs: T0 });
          await ask(memcached(), { namespace: ns, limits: [limit!], nowMs: T0 + 5, cost: 3 });
          const value = await admin.value(admin.item(ns, 'client', 'f', limit));
          expect(value).toBe(String(BigInt(T0) * 2n ** 22n + 4n));
          expect(decodeWindow(value!, 'k')).toEqual({ startMs: T0, count: 4 });
        });

        it('cost one increment and nothing else for an admitted request on a key already in its window', async () => {
          const ns = namespace();
          const policy = limits({ limit: 100, windowMs: HOUR });
          await ask(memcached(), { namespace: ns, limits: policy });
          const delta = await commandsOf(admin, async () => {
            for (let i = 0; i < 5; i++) expect((await ask(memcached(), { namespace: ns, limits: policy, nowMs: T0 + i })).allowed).toBe(true);
          });
          expect(delta).toEqual({ incr_hits: 5 });
        });

        it('on a first hit: an increment that misses, then an add', async () => {
          const ns = namespace();
          const delta = await commandsOf(admin, () => ask(memcached(), { namespace: ns, limits: limits({ limit: 100, windowMs: HOUR }) }));
          expect(delta).toEqual({ incr_misses: 1, cmd_set: 1 });
        });

        it('take a refused increment back, so a refusal charges nothing', async () => {
          const ns = namespace();
          const [limit] = limits({ limit: 2, windowMs: HOUR });
          await ask(memcached(), { namespace: ns, limits: [limit!], cost: 2 });
          const delta = await commandsOf(admin, async () => {
            expect((await ask(memcached(), { namespace: ns, limits: [limit!], cost: 1 })).allowed).toBe(false);
          });
          // The increment, then a compare-and-set back to the count before it.
          expect(delta).toEqual({ incr_hits: 1, cmd_set: 1, cas_hits: 1 });
          expect(decodeWindow((await admin.value(admin.item(ns, 'client', 'f', limit)))!, 'k').count).toBe(2);
        });

        it('keep a sliding window in two slots that alternate between windows', async () => {
          const ns = namespace();
          const [limit] = limits({ algorithm: 'sliding-window', limit: 10, windowMs: 1_000 });
          await ask(memcached(), { namespace: ns, limits: [limit!], nowMs: T0 + 100, cost: 3 });
          await ask(memcached(), { namespace: ns, limits: [limit!], nowMs: T0 + 1_100, cost: 2 });
          // T0 is a multiple of 2,000 ms: window T0 is in slot 0, window T0 + 1,000 in slot 1.
          const slot0 = decodeWindow((await admin.value(admin.item(ns, 'client', 's0', limit)))!, 'k');
          const slot1 = decodeWindow((await admin.value(admin.item(ns, 'client', 's1', limit)))!, 'k');
          expect([slot0, slot1]).toEqual([
            { startMs: T0, count: 3 },
            { startMs: T0 + 1_000, count: 2 },
          ]);
          // Two windows on, slot 0 is reused for window T0 + 2,000, and slot 1 is its previous window.
          const d = await ask(memcached(), { namespace: ns, limits: [limit!], nowMs: T0 + 2_500 });
          expect(d.limits[0]!.tokensAfter).toBeCloseTo(10 - 2 * 0.5 - 1, 9);
          expect(decodeWindow((await admin.value(admin.item(ns, 'client', 's0', limit)))!, 'k')).toEqual({ startMs: T0 + 2_000, count: 1 });
        });

        it('fall back to text and compare-and-set for a fractional count, and go on counting exactly', async () => {
          const ns = namespace();
          const [limit] = limits({ limit: 3, windowMs: HOUR });
          await ask(memcached(), { namespace: ns, limits: [limit!], cost: 0.5 });
          expect(await admin.value(admin.item(ns, 'client', 'f', limit))).toBe(`w${T0}:0.5`);
          const d = await ask(memcached(), { namespace: ns, limits: [limit!], cost: 2 });
          expect([d.allowed, d.limits[0]!.tokensAfter]).toEqual([true, 0.5]);
          expect((await ask(memcached(), { namespace: ns, limits: [limit!], cost: 1 })).allowed).toBe(false);
        });

        it('reject, naming the key, a value this store did not write', async () => {
          const ns = namespace();
          const [limit] = limits({ limit: 3, windowMs: HOUR });
          await admin.set(admin.item(ns, 'client', 'f', limit), 'hello');
          await expect(ask(memcached(), { namespace: ns, limits: [limit!] })).rejects.toMatchObject({ code: 'ERR_MEMCACHED_VALUE', message: expect.stringContaining('"hello"') });
        });
      });

      describe('the bucket item', () => {
        it('holds every compare-and-set limit of a key as JSON, with the caller-clock time each state expires', async () => {
          const ns = namespace();
          const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 1_000, name: 'second' }, { algorithm: 'token-bucket', limit: 100, windowMs: HOUR, name: 'hour' });
          await ask(memcached(), { namespace: ns, limits: policy, cost: 2 });
          const value = JSON.parse((await admin.value(admin.item(ns, 'client', 'b')))!);
          // GCRA: TAT = now + 2 × 100 ms; token bucket: 98 tokens at T0, full again in 2 × 36 s.
          expect(value).toEqual({ 'gcra:second': [T0 + 200, T0 + 200], 'token-bucket:hour': [T0 + 72_000, 98, T0] });
        });

        it('costs a read and a compare-and-set per decision', async () => {
          const ns = namespace();
          const policy = limits({ algorithm: 'gcra', limit: 10, windowMs: 1_000 });
          await ask(memcached(), { namespace: ns, limits: policy });
          const delta = await commandsOf(admin, () => ask(memcached(), { namespace: ns, limits: policy, nowMs: T0 + 1 }));
          expect(delta).toEqual({ cmd_get: 1, cmd_set: 1, cas_hits: 1 });
        });
      });

      describe('keys', () => {
        it('take any user key: long, with spaces, control characters, emoji or lone surrogates, each with its own state', async () => {
          const ns = namespace();
          const policy = limits({ limit: 1, windowMs: HOUR });
          const odd = ['x'.repeat(10_000), 'a b', 'line\r\nmg x v', '\u0000', '\u{1F600}', '\uD800', '\uD801', ''];
          for (const key of odd) expect((await ask(memcached(), { namespace: ns, limits: policy, key })).allowed).toBe(true);
          for (const key of odd) expect((await ask(memcached(), { namespace: ns, limits: policy, key })).allowed).toBe(false);
        });

        it('are at most 250 bytes of printable ASCII', () => {
          const keys = new KeySpace('p'.repeat(100));
          const base = keys.base('namespace '.repeat(50), '\u0000'.repeat(10_000));
          for (const key of [keys.item(base, 'b'), keys.item(base, 'f', 'fixed-window:'.repeat(20)), keys.item(base, 's1', 'x')]) {
            expect(Buffer.byteLength(key)).toBeLessThanOrEqual(250);
            expect(key).toMatch(/^[\x21-\x7e]+$/);
          }
        });
      });

      describe('reset', () => {
        it('deletes the bucket item and the counters of the window limits this store has seen', async () => {
          const ns = namespace();
          const [fixed, sliding, gcra] = limits(
            { limit: 1, windowMs: HOUR, name: 'f' },
            { algorithm: 'sliding-window', limit: 1, windowMs: HOUR, name: 's' },
            { algorithm: 'gcra', limit: 1, windowMs: HOUR, name: 'g' },
          );
          await ask(memcached(), { namespace: ns, limits: [fixed!, sliding!, gcra!] });
          await memcached().resetKey('client', ns);
          for (const item of [admin.item(ns, 'client', 'b'), admin.item(ns, 'client', 'f', fixed), admin.item(ns, 'client', 's0', sliding), admin.item(ns, 'client', 's1', sliding)]) {
            expect(await admin.value(item)).toBeUndefined();
          }
        });
      });

      describe('reset from a store instance that never evaluated the key', () => {
        it('deletes the window counters of the limits it is given', async () => {
          const ns = namespace();
          const [fixed] = limits({ limit: 1, windowMs: HOUR, name: 'f' });
          await ask(memcached(), { namespace: ns, limits: [fixed!] });
          const fresh = open(server().url);
          try {
            await fresh.resetKey('client', ns, [fixed!]);
          } finally {
            await fresh.dispose();
          }
          expect(await admin.value(admin.item(ns, 'client', 'f', fixed))).toBeUndefined();
        });
      });

      describe('several app servers on one Memcached', () => {
        const N = 20;
        const k = 8;
        const SERVERS = 4;
        let stores: MemcachedStore[];
        beforeAll(() => {
          stores = Array.from({ length: SERVERS }, () => open(server().url));
        });
        afterAll(() => Promise.all(stores.map((s) => s.dispose())));

        const cases: Array<[string, LimitOptions[]]> = [
          ['fixed-window (increments)', [{ limit: N, windowMs: HOUR }]],
          ['sliding-window (increments)', [{ algorithm: 'sliding-window', limit: N, windowMs: HOUR }]],
          ['gcra (compare-and-set)', [{ algorithm: 'gcra', limit: N, windowMs: HOUR }]],
          ['sliding-log (compare-and-set)', [{ algorithm: 'sliding-log', limit: N, windowMs: HOUR }]],
          [
            'fixed-window and gcra (increments taken back when the compare-and-set refuses or loses)',
            [
              { limit: N + 5, windowMs: HOUR, name: 'window' },
              { algorithm: 'gcra', limit: N, windowMs: HOUR, name: 'rate' },
            ],
          ],
        ];
        it.each(cases)(`%s: ${N} + ${k} concurrent requests from ${SERVERS} stores at a limit of ${N} → exactly ${k} refused, and nothing left over-counted`, async (_, options) => {
          const ns = freshNamespace();
          const policy = limits(...options);
          const decisions = await Promise.all(Array.from({ length: N + k }, (_, i) => ask(stores[i % SERVERS]!, { namespace: ns, limits: policy })));
          expect(decisions.filter((d) => !d.allowed)).toHaveLength(k);
          const after = await ask(stores[0]!, { namespace: ns, limits: policy, mode: 'peek' });
          expect(after.limits.map((l) => l.tokensAfter)).toEqual(policy.map((l) => l.limit - N));
        });
      });
    },
  });

  testDifferential({ name: 'memcached', makeStore: () => open(server().url) });
  testRefusalCacheDifferential({ name: 'memcached', makeStore: () => open(server().url) });
});

/**
 * The failure-policy tests stop and restart their own server, so they never
 * use `MEMCACHED_SERVERS`: they need the `memcached` binary.
 */
const binary = findBinary('memcached');
const describeWithPrivateServer = binary !== undefined ? describe : inCI() ? describe : describe.skip;
if (binary === undefined && !inCI()) {
  process.stderr.write('[ratekit tests] skipped "memcachedStore when the server fails": `memcached` was not found on PATH (install it, e.g. apt-get install -y memcached)\n');
}

describeWithPrivateServer('memcachedStore when the server fails', () => {
  if (binary === undefined) {
    it('needs the memcached binary', () => {
      throw new Error('No `memcached` binary in CI: install it (apt-get install -y memcached)');
    });
    return;
  }
  const STORE_TIMEOUT_MS = 300;
  /** Timers fire late when the machine is busy (jest runs suites side by side on 2 cores): a hang would still be far above this. */
  const SCHEDULING_SLACK_MS = 300;
  let server: LocalMemcached;
  let store: MemcachedStore;
  beforeAll(async () => {
    server = await startMemcached({ binary });
    store = open(server.url, { timeoutMs: 250, reconnectDelayMs: 50 });
  });
  afterAll(async () => {
    await store.dispose();
    await server.stop();
  });

  const policy: LimitOptions[] = [{ limit: 3, windowMs: HOUR }];

  /** Decisions for `count` requests, with how long each took and whether the store failed. */
  async function timed(limiter: ReturnType<typeof createLimiter>, key: string, count: number, errors: RateKitError[]) {
    const rows: Array<{ allowed: boolean; ms: number; failed: boolean }> = [];
    for (let i = 0; i < count; i++) {
      const seen = errors.length;
      const started = performance.now();
      const d = await limiter.consume(key);
      rows.push({ allowed: d.allowed, ms: performance.now() - started, failed: errors.length > seen });
    }
    return rows;
  }

  /** Peeks at `key` until the answer comes from the store (not the fallback), for at most `withinMs`. */
  async function untilRecovered(limiter: ReturnType<typeof createLimiter>, key: string, errors: RateKitError[], withinMs: number): Promise<void> {
    const started = Date.now();
    for (;;) {
      const seen = errors.length;
      await limiter.peek(key);
      if (errors.length === seen) return;
      if (Date.now() - started > withinMs) throw new Error(`The store did not recover within ${withinMs} ms: ${errors.at(-1)?.message}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it.each(['allow', 'deny'] as const)(
    "onStoreError '%s': a killed server gives every request a fallback decision within storeTimeoutMs, and after a restart on the same port the store counts again",
    async (onStoreError) => {
      const errors: RateKitError[] = [];
      const limiter = createLimiter({ limits: policy, store, prefix: freshNamespace(), onStoreError, storeTimeoutMs: STORE_TIMEOUT_MS, onError: (e) => errors.push(e) });
      expect((await timed(limiter, 'a', 2, errors)).map((r) => [r.allowed, r.failed])).toEqual([
        [true, false],
        [true, false],
      ]);

      await server.stop();
      const down = await timed(limiter, 'a', 10, errors);
      expect(down.every((r) => r.failed && r.allowed === (onStoreError === 'allow'))).toBe(true);
      expect(Math.max(...down.map((r) => r.ms))).toBeLessThan(STORE_TIMEOUT_MS + SCHEDULING_SLACK_MS);
      expect(errors.every((e) => e.code === 'ERR_RATEKIT_STORE')).toBe(true);

      server = await startMemcached({ binary, port: server.port });
      await untilRecovered(limiter, 'a', errors, 5_000);
      // The restarted server is empty: the key counts from scratch, three admitted, then refused.
      expect((await timed(limiter, 'a', 4, errors)).map((r) => [r.allowed, r.failed])).toEqual([
        [true, false],
        [true, false],
        [true, false],
        [false, false],
      ]);
    },
    20_000,
  );

  it("a frozen server (SIGSTOP): every request gets 'deny' within storeTimeoutMs; once it resumes, the store answers again", async () => {
    const errors: RateKitError[] = [];
    const limiter = createLimiter({ limits: policy, store, prefix: freshNamespace(), onStoreError: 'deny', storeTimeoutMs: STORE_TIMEOUT_MS, onError: (e) => errors.push(e) });
    await untilRecovered(limiter, 'b', errors, 5_000);
    await server.freeze();
    try {
      const frozen = await timed(limiter, 'b', 5, errors);
      expect(frozen.every((r) => r.failed && !r.allowed)).toBe(true);
      expect(Math.max(...frozen.map((r) => r.ms))).toBeLessThan(STORE_TIMEOUT_MS + SCHEDULING_SLACK_MS);
    } finally {
      server.signal('SIGCONT');
    }
    await untilRecovered(limiter, 'b', errors, 5_000);
    // The commands the limiter gave up on were already in the frozen server's socket buffers: once it
    // resumes it may still run them and charge 'b' (erring strict, as the README says). So 'b' gets a
    // real decision whose verdict depends on how many landed, and a fresh key shows the store counting.
    expect((await timed(limiter, 'b', 1, errors)).map((r) => r.failed)).toEqual([false]);
    expect((await timed(limiter, 'c', 4, errors)).map((r) => [r.allowed, r.failed])).toEqual([
      [true, false],
      [true, false],
      [true, false],
      [false, false],
    ]);
  }, 20_000);

  it("onStoreError 'throw': the caller gets ERR_RATEKIT_STORE with the Memcached error as its cause", async () => {
    const limiter = createLimiter({ limits: policy, store, prefix: freshNamespace(), storeTimeoutMs: STORE_TIMEOUT_MS });
    await server.stop();
    try {
      const error = await Promise.resolve(limiter.consume('d')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateKitError);
      expect(error).toMatchObject({ code: 'ERR_RATEKIT_STORE', cause: { name: 'MemcachedError', code: 'ERR_MEMCACHED_CONNECTION' } });
    } finally {
      server = await startMemcached({ binary, port: server.port });
    }
  }, 20_000);
});
