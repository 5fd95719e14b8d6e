// What `clock: 'server'` buys (README, `clock: 'server'`), measured: two instances share one identifier,
// one instance's clock 30 s ahead of the other's. Each runs the same alternating requests, once on the callers'
// clocks (the incumbent's behaviour) and once on the Redis server's. The admissions are compared with those of
// the same two instances when their clocks agree: on the callers' clocks the skew changes how many pass (the
// numbers below are the measured difference, exact for these fixed clocks), on the server's it changes nothing.
import { describeWithService, redisService } from '@ratekit/test-utils';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, openClients, T0, uniquePrefix } from './test-support.js';

const SKEW_MS = 30_000;
const REQUESTS = 12;
/** An hour, so that a run on the server's (real) clock does not cross a window; the callers' clocks sit 10 s before a window ends. */
const SLIDING = { limiter: () => Ratelimit.slidingWindow(4, '1 h'), start: T0 + 3_600_000 - 10_000 };
/** 4 tokens, one more every 10 s: 30 s of skew is three refills. */
const BUCKET = { limiter: () => Ratelimit.tokenBucket(1, '10 s', 4), start: T0 };

describeWithService(redisService, 'two instances whose clocks differ by 30 s', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  /** How many of REQUESTS requests, alternating between two instances (the second `skewMs` ahead), pass. */
  async function admitted(algorithm: 'slidingWindow' | 'tokenBucket', clock: 'caller' | 'server', skewMs: number): Promise<number> {
    const { limiter, start } = algorithm === 'slidingWindow' ? SLIDING : BUCKET;
    const prefix = uniquePrefix(`skew-${algorithm}-${clock}`);
    const open = (redis: unknown, offset: number) => new Ratelimit({ redis, limiter: limiter(), prefix, clock, now: () => start + offset, ephemeralCache: false });
    const instances = [open(clients.ioredis, 0), open(clients.upstash, skewMs)];
    let passed = 0;
    for (let i = 0; i < REQUESTS; i++) if ((await instances[i % 2]!.limit('u')).success) passed++;
    for (const key of await clients.ioredis.keys(`${prefix}:*`)) await clients.ioredis.del(key);
    return passed;
  }

  it.each([
    // [algorithm, admitted with agreeing clocks, admitted with the second 30 s ahead]
    ['slidingWindow', 4, 6],
    ['tokenBucket', 4, 5],
  ] as const)("%s: on the callers' clocks the skew changes the count (%i, then %i); on the server's clock it is the same", async (algorithm, aligned, skewed) => {
    expect(await admitted(algorithm, 'caller', 0)).toBe(aligned);
    expect(await admitted(algorithm, 'caller', SKEW_MS)).toBe(skewed);
    // clock: 'server' reads Redis TIME in the script: the instances' own clocks (30 s apart) are not read.
    expect(await admitted(algorithm, 'server', 0)).toBe(aligned);
    expect(await admitted(algorithm, 'server', SKEW_MS)).toBe(aligned);
  });
});
