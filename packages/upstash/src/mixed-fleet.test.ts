// A fleet mid-migration: @upstash/ratelimit 2.2.0 and @ratekit/upstash alternate on one identifier
// (through @upstash/redis and a local Upstash REST endpoint on the real Redis) and must answer as a
// fleet of incumbents alone answers the same schedule (every success and remaining), leaving the
// same keys, values and TTLs. The incumbent reads Date.now(), so the test fixes it; ours gets the
// same clock through `now`.
import { describeWithService, redisService, startUpstashRestServer, type UpstashRestServer } from '@ratekit/test-utils';
import { Ratelimit as Incumbent } from '@upstash/ratelimit';
import fc from 'fast-check';
import { Redis as Upstash } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { Ratelimit } from './ratelimit.js';
import { FixedClock, T0, uniquePrefix } from './test-support.js';
import type { Duration } from './duration.js';

type Algorithm = 'fixedWindow' | 'slidingWindow' | 'tokenBucket' | 'cachedFixedWindow';
type Step = { at: number; rate?: number };

/** One limiter of a fleet: `limit` with the instant set, whichever library it is. */
type Member = (identifier: string, step: Step) => Promise<{ success: boolean; remaining: number; pending: Promise<unknown> }>;

const SCHEDULES: Record<Algorithm, Step[]> = {
  fixedWindow: [{ at: 0 }, { at: 1 }, { at: 2 }, { at: 3 }, { at: 4 }, { at: 10_000 }, { at: 10_001, rate: 2 }, { at: 15_000, rate: -1 }, { at: 16_000 }, { at: 17_000 }],
  slidingWindow: [
    { at: 0 },
    { at: 1 },
    { at: 2 },
    { at: 3 },
    { at: 5_000 },
    { at: 10_000 },
    { at: 12_500 },
    { at: 15_000 },
    { at: 17_500 },
    { at: 19_999 },
    { at: 20_000 },
    { at: 25_000, rate: 2 },
    { at: 27_000, rate: 5 },
  ],
  tokenBucket: [{ at: 0 }, { at: 10 }, { at: 20 }, { at: 30 }, { at: 40 }, { at: 10_000 }, { at: 15_000, rate: 2 }, { at: 15_001 }, { at: 55_000 }, { at: 55_001, rate: 3 }, { at: 55_002 }],
  // Each instance counts in its own cache: refusals come once an instance's own count passes the limit.
  cachedFixedWindow: [...Array.from({ length: 12 }, (_, i) => ({ at: i })), { at: 10_000 }, { at: 10_001 }, { at: 10_002, rate: 3 }, { at: 10_003 }],
};

const WINDOW: Duration = '10 s';

describeWithService(redisService, 'a mixed fleet: @upstash/ratelimit 2.2.0 and @ratekit/upstash on one identifier', (server) => {
  let admin: ReturnType<typeof createClient>;
  let rest: UpstashRestServer;
  let upstash: Upstash;
  let tcp: IORedis;
  let nowSpy: jest.SpiedFunction<typeof Date.now>;
  const clock = new FixedClock(T0);

  beforeAll(async () => {
    admin = createClient({ url: server().url });
    await admin.connect();
    // The endpoint accepts the incumbent's `#!lua flags=allow-key-locking` scripts (an Upstash flag
    // Redis 7.0 refuses) as Upstash does: see @ratekit/test-utils's upstash-rest-server.ts.
    rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
    upstash = new Upstash({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false });
    tcp = new IORedis(server().url);
  });
  afterAll(async () => {
    await rest.close();
    await admin.quit();
    await tcp.quit();
  });
  beforeEach(() => {
    nowSpy = jest.spyOn(Date, 'now').mockImplementation(() => clock.ms);
  });
  afterEach(() => nowSpy.mockRestore());

  function incumbentAlgorithm(algorithm: Algorithm) {
    return algorithm === 'tokenBucket' ? Incumbent.tokenBucket(2, WINDOW, 4) : Incumbent[algorithm](4, WINDOW);
  }
  function ourAlgorithm(algorithm: Algorithm) {
    return algorithm === 'tokenBucket' ? Ratelimit.tokenBucket(2, WINDOW, 4) : Ratelimit[algorithm](4, WINDOW);
  }
  /** A member of a fleet; ours over HTTP (`@upstash/redis`), or over TCP (ioredis) with `overTcp`. */
  function member(kind: 'incumbent' | 'ours', algorithm: Algorithm, prefix: string, overTcp = false): Member {
    // The ephemeral cache only where the algorithm needs it: each member has its own, as separate instances do.
    const ephemeralCache = algorithm === 'cachedFixedWindow' ? new Map<string, number>() : false;
    const limiter =
      kind === 'incumbent'
        ? new Incumbent({ redis: upstash, limiter: incumbentAlgorithm(algorithm), prefix, ephemeralCache, enableTelemetry: false })
        : new Ratelimit({ redis: overTcp ? tcp : upstash, limiter: ourAlgorithm(algorithm), prefix, ephemeralCache, now: clock.now });
    return (identifier, step) => {
      clock.ms = T0 + step.at;
      return limiter.limit(identifier, step.rate === undefined ? undefined : { rate: step.rate });
    };
  }

  /** Runs `schedule` with the fleet's members taking turns; returns each answer and the data left in Redis. */
  async function run(fleet: Member[], prefix: string, schedule: Step[]) {
    const answers: Array<[boolean, number]> = [];
    for (const [i, step] of schedule.entries()) {
      const response = await fleet[i % fleet.length]!('u', step);
      await response.pending;
      answers.push([response.success, response.remaining]);
    }
    const data: Record<string, { value: unknown; ttl: number }> = {};
    for (const key of await admin.keys(`${prefix}:*`)) {
      const type = await admin.type(key);
      const value = type === 'hash' ? await admin.hGetAll(key) : await admin.get(key);
      data[key.slice(prefix.length)] = { value, ttl: await admin.pTTL(key) };
      await admin.del(key);
    }
    return { answers, data };
  }

  const sameTtl = (a: number, b: number) => (a < 0 || b < 0 ? a === b : Math.abs(a - b) < 2_000);

  it.each(['fixedWindow', 'slidingWindow', 'tokenBucket'] as const)('%s: the same answers, keys, values and TTLs as a fleet of incumbents', async (algorithm) => {
    const schedule = SCHEDULES[algorithm];
    const [p1, p2, p3] = [uniquePrefix(`fleet-${algorithm}-incumbents`), uniquePrefix(`fleet-${algorithm}-mixed`), uniquePrefix(`fleet-${algorithm}-mixed-ours-first`)];
    const reference = await run([member('incumbent', algorithm, p1), member('incumbent', algorithm, p1)], p1, schedule);
    const mixed = await run([member('incumbent', algorithm, p2), member('ours', algorithm, p2)], p2, schedule);
    const oursFirst = await run([member('ours', algorithm, p3), member('incumbent', algorithm, p3)], p3, schedule);
    const p4 = uniquePrefix(`fleet-${algorithm}-mixed-tcp`);
    const oursOverTcp = await run([member('incumbent', algorithm, p4), member('ours', algorithm, p4, true)], p4, schedule);
    // The reference itself refuses somewhere, so the comparison covers refusals.
    expect(reference.answers.some(([success]) => !success)).toBe(true);
    expect(Object.keys(reference.data).length).toBeGreaterThan(0);
    for (const fleet of [mixed, oursFirst, oursOverTcp]) {
      expect(fleet.answers).toEqual(reference.answers);
      expect(Object.keys(fleet.data).sort()).toEqual(Object.keys(reference.data).sort());
      for (const [key, { value, ttl }] of Object.entries(reference.data)) {
        expect(fleet.data[key]!.value).toEqual(value);
        expect([key, sameTtl(fleet.data[key]!.ttl, ttl)]).toEqual([key, true]);
      }
    }
  });

  it.each(['fixedWindow', 'slidingWindow', 'tokenBucket'] as const)('%s: random schedules (rates, refunds, gaps), the same answers and data as incumbents alone', async (algorithm) => {
    const step = fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 }), fc.integer({ min: 4_000, max: 25_000 })), rate: fc.constantFrom(1, 1, 1, 2, 3, -1) });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), fc.integer({ min: 0, max: 9_999 }), async (steps, offset) => {
        let at = offset;
        const schedule: Step[] = steps.map(({ gap, rate }) => ({ at: (at += gap), ...(rate === 1 ? {} : { rate }) }));
        const [p1, p2] = [uniquePrefix(`prop-${algorithm}-${runs}-incumbents`), uniquePrefix(`prop-${algorithm}-${runs++}-mixed`)];
        const reference = await run([member('incumbent', algorithm, p1), member('incumbent', algorithm, p1)], p1, schedule);
        const mixed = await run([member('ours', algorithm, p2), member('incumbent', algorithm, p2)], p2, schedule);
        expect(mixed.answers).toEqual(reference.answers);
        expect(Object.keys(mixed.data).sort()).toEqual(Object.keys(reference.data).sort());
        for (const [key, { value, ttl }] of Object.entries(reference.data)) {
          expect(mixed.data[key]!.value).toEqual(value);
          expect([key, sameTtl(mixed.data[key]!.ttl, ttl)]).toEqual([key, true]);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('cachedFixedWindow: the same answers, keys and values; our TTL where the incumbent sets none', async () => {
    const algorithm = 'cachedFixedWindow';
    const schedule = SCHEDULES[algorithm];
    const [p1, p2] = [uniquePrefix('fleet-cfw-incumbents'), uniquePrefix('fleet-cfw-mixed')];
    const reference = await run([member('incumbent', algorithm, p1), member('incumbent', algorithm, p1)], p1, schedule);
    const mixed = await run([member('incumbent', algorithm, p2), member('ours', algorithm, p2)], p2, schedule);
    expect(reference.answers.some(([success]) => !success)).toBe(true);
    expect(mixed.answers).toEqual(reference.answers);
    expect(Object.keys(mixed.data).sort()).toEqual(Object.keys(reference.data).sort());
    for (const [key, { value, ttl }] of Object.entries(reference.data)) {
      expect(mixed.data[key]!.value).toEqual(value);
      // The incumbent's script never sets the expiry (see scripts.ts); ours sets one window.
      expect(ttl).toBe(-1);
      expect(mixed.data[key]!.ttl).toBeGreaterThan(0);
      expect(mixed.data[key]!.ttl).toBeLessThanOrEqual(10_000);
    }
  });

  it('dynamic limits: set by one library, read and applied by the other', async () => {
    const prefix = uniquePrefix('fleet-dynamic');
    const incumbent = new Incumbent({ redis: upstash, limiter: Incumbent.slidingWindow(10, WINDOW), prefix, dynamicLimits: true, ephemeralCache: false, enableTelemetry: false });
    const ours = new Ratelimit({ redis: upstash, limiter: Ratelimit.slidingWindow(10, WINDOW), prefix, dynamicLimits: true, ephemeralCache: false, now: clock.now });
    clock.ms = T0;
    await incumbent.setDynamicLimit({ limit: 3 });
    expect(await ours.getDynamicLimit()).toEqual({ dynamicLimit: 3 });
    const answers = [];
    for (const limiter of [ours, incumbent, ours, incumbent]) {
      const response = await limiter.limit('u');
      answers.push([response.success, response.remaining, response.limit]);
    }
    expect(answers).toEqual([
      [true, 2, 3],
      [true, 1, 3],
      [true, 0, 3],
      [false, 0, 3],
    ]);
    await ours.setDynamicLimit({ limit: false });
    expect(await incumbent.getDynamicLimit()).toEqual({ dynamicLimit: null });
    for (const key of await admin.keys(`${prefix}:*`)) await admin.del(key);
  });
});
