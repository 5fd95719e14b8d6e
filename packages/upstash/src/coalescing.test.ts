// On a TCP client the script calls of one iteration of the event loop go to Redis as one call
// (`coalesce`, on by default). That must never change an answer: the same requests, asked together
// of a coalescing limiter, get exactly what they get asked one at a time of a limiter that sends
// each call alone, on every algorithm (fast-check picks the identifiers and rates).
import { describeWithService, redisService } from '@ratekit/test-utils';
import fc from 'fast-check';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { RateKitOptionError } from '@ratekit/core';
import { Ratelimit } from './ratelimit.js';
import { FixedClock, T0, uniquePrefix } from './test-support.js';
import type { Algorithm } from './types.js';

const ALGORITHMS: Record<string, () => Algorithm> = {
  fixedWindow: () => Ratelimit.fixedWindow(5, '10 s'),
  slidingWindow: () => Ratelimit.slidingWindow(5, '10 s'),
  tokenBucket: () => Ratelimit.tokenBucket(2, '1 s', 5),
};

describe('coalesce option', () => {
  it('a coalesce that is not a boolean fails at construction, naming the option', () => {
    expect(() => new Ratelimit({ redis: {}, limiter: Ratelimit.fixedWindow(1, '1 s'), coalesce: 'yes' as unknown as boolean })).toThrow(RateKitOptionError);
    expect(() => new Ratelimit({ redis: {}, limiter: Ratelimit.fixedWindow(1, '1 s'), coalesce: 'yes' as unknown as boolean })).toThrow(/coalesce/);
  });
});

describeWithService(redisService, 'coalescing on TCP never changes an answer', (server) => {
  const clients: Record<string, () => Promise<{ client: object; close: () => Promise<unknown> }>> = {
    ioredis: async () => {
      const client = new IORedis(server().url);
      return { client, close: () => client.quit() };
    },
    'node-redis': async () => {
      const client = createClient({ url: server().url });
      await client.connect();
      return { client, close: () => client.quit() };
    },
  };

  for (const [clientName, open] of Object.entries(clients)) {
    for (const [algorithm, limiter] of Object.entries(ALGORITHMS)) {
      it(`${clientName}, ${algorithm}: requests asked together answer as the same requests asked one at a time without coalescing`, async () => {
        const { client, close } = await open();
        try {
          const counted: number[] = [];
          // Count the calls the client makes, to show the requests were really coalesced.
          const spy = new Proxy(client, {
            get(target, name) {
              const value = Reflect.get(target, name, target) as unknown;
              if (typeof value !== 'function') return value;
              if (name === 'evalsha' || name === 'evalSha') return (...a: unknown[]) => (counted.push(1), (value as (...x: unknown[]) => unknown).apply(target, a));
              return (value as (...x: unknown[]) => unknown).bind(target);
            },
          });
          const step = fc.record({ id: fc.constantFrom('a', 'b', 'c'), rate: fc.integer({ min: -1, max: 3 }) });
          let together = 0;
          let calls = 0;
          await fc.assert(
            fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 30 }), async (steps) => {
              const clock = new FixedClock(T0);
              const options = { limiter: limiter(), now: clock.now, ephemeralCache: false as const };
              const coalesced = new Ratelimit({ redis: spy, prefix: uniquePrefix('coalesced'), ...options });
              const alone = new Ratelimit({ redis: client, prefix: uniquePrefix('alone'), coalesce: false, ...options });
              const before = counted.length;
              const asked = await Promise.all(steps.map((s) => coalesced.limit(s.id, { rate: s.rate })));
              together += steps.length;
              calls += counted.length - before;
              const sequential = [];
              for (const s of steps) sequential.push(await alone.limit(s.id, { rate: s.rate }));
              const view = (r: { success: boolean; remaining: number; reset: number; limit: number }) => [r.success, r.remaining, r.reset, r.limit];
              expect(asked.map(view)).toEqual(sequential.map(view));
            }),
            { numRuns: 25 },
          );
          // The check above is worth something only if the requests were coalesced: far fewer calls than requests.
          expect(calls).toBeLessThan(together / 2);
        } finally {
          await close();
        }
      });
    }
  }
});
