// MultiRegionRatelimit's over-admission bound (README, MultiRegionRatelimit), measured: R regions (R logical
// databases of a private Redis, each behind a client that adds a random network delay each way, as regions far
// apart do), one window (a fixed clock), and bursts of concurrent callers, every request in flight at once. Each
// region decides alone, so the regions together may admit more than the limit, but never more than R × limit:
// a request passes only if the region that answered it first had counted at most `limit` tokens, itself
// included, and each region counts every request it records.
import { privateRedisService, describeWithService } from '@ratekit/test-utils';
import { Redis as IORedis } from 'ioredis';
import { MultiRegionRatelimit } from './multi-region.js';
import { FixedClock, T0, uniquePrefix } from './test-support.js';

const REGIONS = 3;
const LIMIT = 10;
const CALLERS = 60;
const BURSTS = 15;
/** The most one direction of a region's round trip waits, ms. */
const MAX_DELAY_MS = 15;

const randomDelay = () => Math.random() * MAX_DELAY_MS;

/** A region as the limiter sees it: an @upstash/redis-shaped client on `tcp` whose every call waits `delayMs()` there and back. */
function distantRegion(tcp: IORedis, delayMs: () => number = randomDelay) {
  const wait = () => new Promise((resolve) => setTimeout(resolve, delayMs()));
  const call = async (send: () => Promise<unknown>) => {
    await wait();
    const reply = await send();
    await wait();
    return reply;
  };
  return {
    evalsha: (sha: string, keys: string[], args: unknown[]) => call(() => tcp.evalsha(sha, keys.length, ...keys, ...args.map(String))),
    eval: (script: string, keys: string[], args: unknown[]) => call(() => tcp.eval(script, keys.length, ...keys, ...args.map(String))),
  };
}

describeWithService(privateRedisService, `MultiRegionRatelimit over ${REGIONS} regions: admitted in one window`, (server) => {
  let databases: IORedis[];
  const observed: Record<string, number[]> = {};
  beforeAll(() => {
    databases = Array.from({ length: REGIONS }, (_, db) => new IORedis(server().url, { db }));
  });
  afterAll(async () => {
    for (const database of databases) await database.quit();
    for (const [algorithm, counts] of Object.entries(observed)) {
      console.info(
        `${algorithm}: admitted per window in ${counts.length} bursts of ${CALLERS} concurrent callers over ${REGIONS} regions, limit ${LIMIT}: max ${Math.max(...counts)}, min ${Math.min(...counts)} (bound ${REGIONS * LIMIT}); ${counts.join(' ')}`,
      );
    }
  });

  it.each(['fixedWindow', 'slidingWindow'] as const)(`%s: at most ${REGIONS} × ${LIMIT}, more than ${LIMIT} when the regions disagree, none once they have synced`, async (algorithm) => {
    const counts: number[] = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      const clock = new FixedClock(T0 + 1_000); // one window for the whole burst
      const prefix = uniquePrefix(`bound-${algorithm}`);
      // One instance per caller (each with its own ephemeral cache), as in a fleet.
      const instance = () => new MultiRegionRatelimit({ redis: databases.map((database) => distantRegion(database)), limiter: MultiRegionRatelimit[algorithm](LIMIT, '1 m'), prefix, now: clock.now });
      const responses = await Promise.all(Array.from({ length: CALLERS }, () => instance().limit('u')));
      await Promise.all(responses.map((response) => response.pending));
      const admitted = responses.filter((response) => response.success).length;
      counts.push(admitted);
      expect(admitted).toBeLessThanOrEqual(REGIONS * LIMIT);
      // Synced, with nothing in flight: every region holds at least `limit`, so the next request is refused.
      const next = await instance().limit('u');
      await next.pending;
      expect(next.success).toBe(false);
    }
    observed[algorithm] = counts;
    // The regions did disagree (else this measured nothing): some burst passed more than the limit.
    expect(Math.max(...counts)).toBeGreaterThan(LIMIT);
  });

  it.each(['fixedWindow', 'slidingWindow'] as const)(`%s: the bound is reached when each region sees its own callers first: ${REGIONS} × ${LIMIT} pass`, async (algorithm) => {
    const clock = new FixedClock(T0 + 1_000);
    const prefix = uniquePrefix(`bound-reached-${algorithm}`);
    // LIMIT callers near each region: their region answers at once, the others 50 ms later each way.
    const near = (home: number) =>
      new MultiRegionRatelimit({
        redis: databases.map((database, region) => distantRegion(database, () => (region === home ? 0 : 50))),
        limiter: MultiRegionRatelimit[algorithm](LIMIT, '1 m'),
        prefix,
        now: clock.now,
      });
    const callers = Array.from({ length: REGIONS * LIMIT }, (_, i) => near(i % REGIONS));
    const responses = await Promise.all(callers.map((caller) => caller.limit('u')));
    await Promise.all(responses.map((response) => response.pending));
    expect(responses.filter((response) => response.success)).toHaveLength(REGIONS * LIMIT);
  });
});
