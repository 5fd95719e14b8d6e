// blockUntilReady on Bun, Deno and workerd (the runtime matrix, scripts/runtimes): the built @ratekit/upstash
// over @upstash/redis, against the Upstash REST endpoint the matrix starts on Node in front of a real Redis.
// On Cloudflare Workers `Date.now()` is the time of the last I/O and stands still while code runs
// (upstash/ratelimit-js #70): blockUntilReady must wait with timers for the time the refusal names, and end at
// its deadline even when the clock does not move. (Node: block-until-ready.test.ts.)
import { askWithWindowMargin, upstashEndpoint } from '@ratekit/test-utils';
import { Ratelimit } from '@ratekit/upstash';
import { Redis } from '@upstash/redis';

/** An @upstash/redis client on the matrix's endpoint that counts the scripts it is asked to run (one per decision). */
function countingRedis(): { redis: { evalsha: Redis['evalsha']; eval: Redis['eval'] }; scripts: () => number } {
  const redis = new Redis({ ...upstashEndpoint(), retry: false, enableTelemetry: false });
  let evalshas = 0;
  return {
    redis: {
      evalsha: (...args) => {
        evalshas++;
        return redis.evalsha(...args);
      },
      eval: (...args) => redis.eval(...args),
    },
    scripts: () => evalshas,
  };
}

const prefix = (label: string) => `ratekit-upstash-edge:block:${label}:${crypto.randomUUID()}`;

describe('blockUntilReady on this runtime', () => {
  it('resolves with a success in the next window, after one refusal: it waited for the reset with a timer', async () => {
    const { redis, scripts } = countingRedis();
    const ratelimit = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(1, '1 s'), prefix: prefix('next-window') });
    // 300 ms of the window left: blockUntilReady's first ask, a few ms later, lands in the same window.
    const { identifier, first } = await askWithWindowMargin((id) => ratelimit.limit(id), 300);
    expect(first.success).toBe(true);
    const before = scripts();

    const response = await ratelimit.blockUntilReady(identifier, 10_000);

    expect(response.success).toBe(true);
    expect(response.reset).toBeGreaterThan(first.reset); // a later window's
    // One refusal, then the success: a loop polling Date.now() would have asked again and again.
    expect(scripts() - before).toBe(2);
  });

  it('resolves with the refusal at its deadline when the window outlasts it', async () => {
    const { redis, scripts } = countingRedis();
    const ratelimit = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(1, '60 s'), prefix: prefix('deadline') });
    const { identifier, first } = await askWithWindowMargin((id) => ratelimit.limit(id), 2_000); // the 400 ms deadline, and 1.6 s to spare
    const before = scripts();
    const started = Date.now();

    const response = await ratelimit.blockUntilReady(identifier, 400);

    expect(response.success).toBe(false);
    expect(response.reset).toBe(first.reset); // the same window: nothing passed
    expect(Date.now() - started).toBeGreaterThanOrEqual(390); // the timer of the deadline (the clock moved with it)
    expect(scripts() - before).toBe(1); // one refusal: it waited for the deadline, not for the reset
  });

  it('ends at its deadline when Date.now() stands still (a Worker between I/O, at its worst)', async () => {
    const { redis, scripts } = countingRedis();
    const ratelimit = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(1, '60 s'), prefix: prefix('frozen') });
    const { identifier } = await askWithWindowMargin((id) => ratelimit.limit(id), 2_000); // the 300 ms deadline, and 1.7 s to spare
    const before = scripts();
    // The limiter's own clock (read at construction) keeps the real time; blockUntilReady reads Date.now().
    const realNow = Date.now;
    const frozenAt = realNow();
    Date.now = () => frozenAt;
    let response;
    try {
      // With a deadline kept on Date.now() alone this never ends (the runner's 5 s timeout fails the test).
      response = await ratelimit.blockUntilReady(identifier, 300);
    } finally {
      Date.now = realNow;
    }

    expect(response.success).toBe(false);
    expect(scripts() - before).toBe(1);
  }, 5_000);
});
