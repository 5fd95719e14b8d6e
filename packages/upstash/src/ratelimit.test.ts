import { askWithWindowMargin, describeWithService, redisService } from '@ratekit/test-utils';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, FixedClock, openClients, T0, uniquePrefix } from './test-support.js';

describe('Ratelimit options', () => {
  const limiter = Ratelimit.fixedWindow(1, '1 s');
  it('builds analytics and deny lists (enableProtection)', () => {
    expect(() => new Ratelimit({ redis: {}, limiter, analytics: true, enableProtection: true })).not.toThrow();
  });
  it('checks its own additions, clock and now', () => {
    expect(() => new Ratelimit({ redis: {}, limiter, clock: 'edge' as 'server' })).toThrow(/clock/);
    expect(() => new Ratelimit({ redis: {}, limiter, now: 5 as unknown as () => number })).toThrow(/now/);
  });
  it('rejects limit() for a client it does not know, as the incumbent fails on its first call', async () => {
    await expect(new Ratelimit({ redis: {}, limiter }).limit('a')).rejects.toThrow(/redis/);
  });
  it('refuses dynamic limit methods without dynamicLimits, with the incumbent message', async () => {
    const ratelimit = new Ratelimit({ redis: {}, limiter });
    await expect(ratelimit.setDynamicLimit({ limit: 3 })).rejects.toThrow('dynamicLimits must be enabled in the Ratelimit constructor to use setDynamicLimit()');
    await expect(ratelimit.getDynamicLimit()).rejects.toThrow('dynamicLimits must be enabled in the Ratelimit constructor to use getDynamicLimit()');
  });
  it('blockUntilReady needs a positive timeout', async () => {
    await expect(new Ratelimit({ redis: {}, limiter }).blockUntilReady('a', 0)).rejects.toThrow('timeout must be positive');
  });
  it('fails open after `timeout` ms when Redis does not answer', async () => {
    const hanging = { evalsha: () => new Promise(() => undefined), eval: () => new Promise(() => undefined) };
    const response = await new Ratelimit({ redis: hanging, limiter, timeout: 20 }).limit('a');
    expect(response).toEqual({ success: true, limit: 0, remaining: 0, reset: 0, pending: expect.any(Promise), reason: 'timeout' });
  });
  it("rejects limit() with Redis's own error when it fails before the timeout, and ignores a failure after it", async () => {
    const failing = { evalsha: () => Promise.reject(new Error('ERR boom')), eval: () => Promise.reject(new Error('ERR boom')) };
    await expect(new Ratelimit({ redis: failing, limiter, timeout: 1_000 }).limit('a')).rejects.toThrow('ERR boom');
    let fail: (error: Error) => void = () => undefined;
    const late = { evalsha: () => new Promise((_, reject) => (fail = reject)), eval: () => new Promise(() => undefined) };
    const response = await new Ratelimit({ redis: late, limiter, timeout: 20 }).limit('a');
    expect(response.reason).toBe('timeout');
    fail(new Error('ERR too late')); // no unhandled rejection: jest would fail the run
  });
  it('each pending limit() fails open at its own deadline (one timer serves them all)', async () => {
    const hanging = { evalsha: () => new Promise(() => undefined), eval: () => new Promise(() => undefined) };
    const ratelimit = new Ratelimit({ redis: hanging, limiter, timeout: 30 });
    const started = performance.now();
    const first = ratelimit.limit('a');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = ratelimit.limit('b');
    expect((await first).reason).toBe('timeout');
    const firstAt = performance.now() - started;
    expect((await second).reason).toBe('timeout');
    // The second started 20 ms or more after the first: its deadline is its own, not the first's (margin: timers fire late, never early).
    expect(performance.now() - started).toBeGreaterThanOrEqual(49);
    expect(firstAt).toBeGreaterThanOrEqual(29);
  });
  it('checks timeout: a number of ms up to 2³¹ − 1; 0 or less turns it off', async () => {
    for (const timeout of [2 ** 31, Number.POSITIVE_INFINITY, Number.NaN, '5000']) {
      expect(() => new Ratelimit({ redis: {}, limiter, timeout: timeout as number })).toThrow(/timeout/);
    }
    let answer: (reply: unknown) => void = () => undefined;
    const slow = { evalsha: () => new Promise((resolve) => (answer = resolve)), eval: () => new Promise(() => undefined) };
    const off = new Ratelimit({ redis: slow, limiter, timeout: 0 }).limit('a');
    await new Promise((resolve) => setTimeout(resolve, 30));
    answer([1, 1]);
    expect(await off).toMatchObject({ success: true, remaining: 0 });
  });
});

describeWithService(redisService, 'Ratelimit on a real Redis', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  describe.each(['ioredis', 'nodeRedis', 'upstash'] as const)('over %s', (kind) => {
    it('answers from the ephemeral cache after a refusal, without Redis, until the reset', async () => {
      const clock = new FixedClock(T0);
      const cache = new Map<string, number>();
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(1, '10 s'), prefix: uniquePrefix('cache'), now: clock.now, ephemeralCache: cache });
      expect((await ratelimit.limit('u')).success).toBe(true);
      const refused = await ratelimit.limit('u');
      expect(refused.success).toBe(false);
      expect(refused.reason).toBeUndefined(); // the first refusal comes from Redis
      const before = clients.rest.commands.length;
      expect(await ratelimit.limit('u')).toMatchObject({ success: false, remaining: 0, limit: 1, reset: T0 + 10_000, reason: 'cacheBlock' });
      expect(clients.rest.commands.length).toBe(before);
      clock.ms = T0 + 10_000;
      expect(await ratelimit.limit('u')).toMatchObject({ success: false, reason: 'cacheBlock' }); // blocked up to and including reset
      clock.ms = T0 + 10_001;
      expect((await ratelimit.limit('u')).success).toBe(true);
    });

    it('getRemaining and resetUsedTokens, per algorithm', async () => {
      const clock = new FixedClock(T0 + 5_000);
      for (const limiter of [Ratelimit.fixedWindow(5, '10 s'), Ratelimit.slidingWindow(5, '10 s'), Ratelimit.tokenBucket(1, '10 s', 5), Ratelimit.cachedFixedWindow(5, '10 s')]) {
        const ratelimit = new Ratelimit({ redis: clients[kind], limiter, prefix: uniquePrefix('remaining'), now: clock.now });
        expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 5, limit: 5 });
        await ratelimit.limit('u', { rate: 2 });
        expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 3, limit: 5 });
        await ratelimit.resetUsedTokens('u');
        expect(await ratelimit.getRemaining('u')).toMatchObject({ remaining: 5, limit: 5 });
      }
    });

    it('dynamic limits: set, read, applied by every algorithm, removed', async () => {
      const clock = new FixedClock(T0);
      const prefix = uniquePrefix('dynamic');
      const make = (limiter: ReturnType<typeof Ratelimit.fixedWindow>) => new Ratelimit({ redis: clients[kind], limiter, prefix, now: clock.now, dynamicLimits: true, ephemeralCache: false });
      const fixed = make(Ratelimit.fixedWindow(10, '10 s'));
      expect(await fixed.getDynamicLimit()).toEqual({ dynamicLimit: null });
      await fixed.setDynamicLimit({ limit: 2 });
      expect(await fixed.getDynamicLimit()).toEqual({ dynamicLimit: 2 });
      expect(await clients.ioredis.get(`${prefix}:dynamic:global`)).toBe('2');
      expect(await clients.ioredis.pttl(`${prefix}:dynamic:global`)).toBe(-1);
      for (const ratelimit of [fixed, make(Ratelimit.slidingWindow(10, '10 s')), make(Ratelimit.tokenBucket(1, '10 s', 10))]) {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await ratelimit.limit('u'));
        expect(answers.map((r) => [r.success, r.limit])).toEqual([
          [true, 2],
          [true, 2],
          [false, 2],
        ]);
        await ratelimit.resetUsedTokens('u');
      }
      await fixed.setDynamicLimit({ limit: false });
      expect(await fixed.getDynamicLimit()).toEqual({ dynamicLimit: null });
      expect((await fixed.limit('v')).limit).toBe(10);
    });

    it('cachedFixedWindow counts in the cache after the first request, and updates Redis in pending', async () => {
      const clock = new FixedClock(T0);
      const prefix = uniquePrefix('cached');
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.cachedFixedWindow(2, '10 s'), prefix, now: clock.now });
      const answers = [];
      for (let i = 0; i < 4; i++) {
        const response = await ratelimit.limit('u');
        await response.pending;
        answers.push([response.success, response.remaining]);
      }
      expect(answers).toEqual([
        [true, 1],
        [true, 0],
        [false, -1],
        [false, -2],
      ]);
      const key = `${prefix}:u:${T0 / 10_000}`;
      expect(await clients.ioredis.get(key)).toBe('2'); // refusals answered from the cache never reach Redis
      expect(await clients.ioredis.pttl(key)).toBeGreaterThan(0);
      await clients.ioredis.del(key);
      await expect(new Ratelimit({ redis: clients[kind], limiter: Ratelimit.cachedFixedWindow(2, '10 s'), ephemeralCache: false }).limit('u')).rejects.toThrow('This algorithm requires a cache');
    });

    it('blockUntilReady waits for the reset, then passes', async () => {
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.tokenBucket(1, '200ms', 1), prefix: uniquePrefix('block') });
      expect((await ratelimit.limit('u')).success).toBe(true);
      const response = await ratelimit.blockUntilReady('u', 5_000);
      expect(response.success).toBe(true);
    });
  });

  it.each(['fixedWindow', 'slidingWindow', 'tokenBucket'] as const)('over HTTP, %s decides in one request, an EVALSHA of our script', async (algorithm) => {
    const limiter = algorithm === 'tokenBucket' ? Ratelimit.tokenBucket(1, '10 s', 5) : Ratelimit[algorithm](5, '10 s');
    const ratelimit = new Ratelimit({ redis: clients.upstash, limiter, prefix: uniquePrefix('trips'), dynamicLimits: true });
    await ratelimit.limit('u'); // loads the script if the server lacked it
    const before = clients.rest.requests();
    const from = clients.rest.commands.length;
    await ratelimit.limit('u');
    expect(clients.rest.requests() - before).toBe(1);
    expect(clients.rest.commands.slice(from).map((command) => command[0]!.toUpperCase())).toEqual(['EVALSHA']);
  });

  it.each(['ioredis', 'nodeRedis'] as const)('over TCP (%s), a decision is one EVALSHA (seen with MONITOR)', async (kind) => {
    const prefix = uniquePrefix('tcp-trips');
    const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.tokenBucket(1, '10 s', 5), prefix, dynamicLimits: true });
    await ratelimit.limit('u'); // loads the script if the server lacked it
    const monitor = await clients.ioredis.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // MONITOR also shows the commands the script runs (source `lua`): only what the client sent counts.
      if (source !== 'lua' && args.some((arg) => arg.startsWith(prefix))) seen.push(args);
    });
    await ratelimit.limit('u');
    // Wait for the command to come through the monitor, not for a time.
    while (seen.length === 0) await clients.ioredis.ping();
    await clients.ioredis.ping();
    monitor.disconnect();
    expect(seen.map((args) => args[0]!.toUpperCase())).toEqual(['EVALSHA']);
    await clients.ioredis.del(`${prefix}:u`);
  });

  describe("clock: 'server'", () => {
    it.each(['slidingWindow', 'tokenBucket'] as const)('%s: two instances whose clocks differ by 7 s count one budget on the server clock', async (algorithm) => {
      const prefix = uniquePrefix(`server-clock-${algorithm}`);
      const limiter = algorithm === 'slidingWindow' ? Ratelimit.slidingWindow(4, '10 s') : Ratelimit.tokenBucket(1, '1 m', 4);
      const ahead = () => Date.now() + 7_000;
      const server = [
        new Ratelimit({ redis: clients.ioredis, limiter, prefix, clock: 'server', ephemeralCache: false }),
        new Ratelimit({ redis: clients.upstash, limiter, prefix, clock: 'server', now: ahead, ephemeralCache: false }),
      ];
      // The sliding window's windows end on the server's 10 s grid: one ending between the six requests would
      // weigh the first ones down (rounded down) and let a fifth through. The first request is made where its
      // window has 2 s left (six requests take tens of ms; a token bucket's reset, a refill 1 m away, always has).
      const { identifier, first } = await askWithWindowMargin((id) => server[0]!.limit(id), 2_000);
      const answers = [first.success];
      for (let i = 1; i < 6; i++) answers.push((await server[i % 2]!.limit(identifier)).success);
      expect(answers).toEqual([true, true, true, true, false, false]);
      for (const key of await clients.ioredis.keys(`${prefix}:*`)) await clients.ioredis.del(key);
    });

    it('slidingWindow getRemaining reads the server clock too: an instance two windows ahead sees the same count', async () => {
      const prefix = uniquePrefix('server-clock-remaining');
      const limiter = Ratelimit.slidingWindow(5, '1 m');
      const onTime = new Ratelimit({ redis: clients.nodeRedis, limiter, prefix, clock: 'server', ephemeralCache: false });
      const ahead = new Ratelimit({ redis: clients.upstash, limiter, prefix, clock: 'server', now: () => Date.now() + 120_000, ephemeralCache: false }); // on its own clock it would read 5
      // Within one window of the server's 1 m grid (1 s left at least, for three requests): a window ending
      // between them would weigh the 2 down to 1 and read 4.
      const { identifier } = await askWithWindowMargin((id) => onTime.limit(id, { rate: 2 }), 1_000);
      expect(await ahead.getRemaining(identifier)).toMatchObject({ remaining: 3, limit: 5 });
      expect(await onTime.getRemaining(identifier)).toMatchObject({ remaining: 3, limit: 5 });
      for (const key of await clients.ioredis.keys(`${prefix}:*`)) await clients.ioredis.del(key);
    });

    it("with the callers' clocks, the same two instances count differently (the difference the option removes)", async () => {
      const prefix = uniquePrefix('caller-clock');
      const limiter = Ratelimit.tokenBucket(1, '1 s', 2);
      // One instance is 5 s ahead: it sees five refills the other never made.
      const base = T0;
      const behind = new Ratelimit({ redis: clients.ioredis, limiter, prefix, now: () => base, ephemeralCache: false });
      const ahead = new Ratelimit({ redis: clients.ioredis, limiter, prefix, now: () => base + 5_000, ephemeralCache: false });
      const answers = [];
      for (const ratelimit of [behind, behind, behind, ahead, ahead, ahead]) answers.push((await ratelimit.limit('u')).success);
      expect(answers).toEqual([true, true, false, true, true, false]);
      await clients.ioredis.del(`${prefix}:u`);
    });
  });
});
