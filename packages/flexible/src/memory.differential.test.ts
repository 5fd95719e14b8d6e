// A differential suite against rate-limiter-flexible 11.4 itself (issue 38): its RateLimiterMemory and
// BurstyRateLimiter, and ours, get the same random operations on one fake clock (jest's, which both read through
// Date.now() and rlf's timers), and must answer alike, call by call: resolved or rejected, and every field of the
// RateLimiterRes (or null). The upstream runner (upstream/run.mjs) runs rlf's own tests; this runs what they do not
// think of.
import fc from 'fast-check';
import * as rlf from 'rate-limiter-flexible';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from './index.js';

const T0 = 1_795_262_400_000;
beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

type Op =
  | { op: 'consume' | 'penalty' | 'reward'; key: string; points: number }
  | { op: 'get' | 'delete'; key: string }
  | { op: 'block'; key: string; seconds: number }
  | { op: 'set'; key: string; points: number; seconds: number }
  | { op: 'wait'; ms: number };

const keyArb = fc.constantFrom('a', 'b');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom('consume' as const, 'penalty' as const, 'reward' as const), key: keyArb, points: fc.constantFrom(0, 1, 1, 2, 3) }),
  fc.record({ op: fc.constantFrom('get' as const, 'delete' as const), key: keyArb }),
  fc.record({ op: fc.constant('block' as const), key: keyArb, seconds: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ op: fc.constant('set' as const), key: keyArb, points: fc.integer({ min: 0, max: 6 }), seconds: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ op: fc.constant('wait' as const), ms: fc.constantFrom(0, 250, 999, 1_000, 2_500) }),
);

interface Limiter {
  consume(key: string, points?: number): Promise<unknown>;
  penalty(key: string, points?: number): Promise<unknown>;
  reward(key: string, points?: number): Promise<unknown>;
  get(key: string): Promise<unknown>;
  delete(key: string): Promise<unknown>;
  block(key: string, seconds: number): Promise<unknown>;
  set(key: string, points: number, seconds: number): Promise<unknown>;
}

/** What a call answered, in a form both libraries' results compare in. */
async function answer(call: () => Promise<unknown>): Promise<unknown> {
  const plain = (res: unknown) =>
    res instanceof RateLimiterRes || res instanceof rlf.RateLimiterRes
      ? { remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext, consumed: res.consumedPoints, first: res.isFirstInDuration }
      : res;
  try {
    return { resolved: plain(await call()) };
  } catch (error) {
    return { rejected: error instanceof Error ? `Error: ${error.message}` : plain(error) };
  }
}

/** One operation on one limiter. */
function apply(limiter: Limiter, o: Exclude<Op, { op: 'wait' }>): Promise<unknown> {
  switch (o.op) {
    case 'get':
    case 'delete':
      return limiter[o.op](o.key);
    case 'block':
      return limiter.block(o.key, o.seconds);
    case 'set':
      return limiter.set(o.key, o.points, o.seconds);
    default:
      return limiter[o.op](o.key, o.points);
  }
}

async function run(ours: Limiter, theirs: Limiter, ops: Op[]): Promise<void> {
  for (const [i, o] of ops.entries()) {
    if (o.op === 'wait') {
      await jest.advanceTimersByTimeAsync(o.ms);
      continue;
    }
    const call = (limiter: Limiter) => () => apply(limiter, o);
    const [got, expected] = [await answer(call(ours)), await answer(call(theirs))];
    expect({ step: i, ...o, answer: got }).toEqual({ step: i, ...o, answer: expected });
  }
}

const optionsArb = fc.record({ points: fc.integer({ min: 1, max: 5 }), duration: fc.constantFrom(1, 2, 5), blockDuration: fc.constantFrom(0, 0, 3) });

describe('answers as rate-limiter-flexible 11.4 does, call by call, on one fake clock', () => {
  it('RateLimiterMemory', async () => {
    await fc.assert(
      fc.asyncProperty(optionsArb, fc.array(opArb, { maxLength: 40 }), async (options, ops) => {
        await run(new RateLimiterMemory(options), new rlf.RateLimiterMemory(options), ops);
      }),
      { numRuns: 200 },
    );
  });

  it('BurstyRateLimiter over two RateLimiterMemory', async () => {
    await fc.assert(
      fc.asyncProperty(
        optionsArb,
        fc.integer({ min: 1, max: 4 }),
        fc.array(
          opArb.filter((o) => o.op === 'consume' || o.op === 'get' || o.op === 'wait' || o.op === 'delete'),
          { maxLength: 40 },
        ),
        async (options, burst, ops) => {
          const ours = new BurstyRateLimiter(new RateLimiterMemory(options), new RateLimiterMemory({ keyPrefix: 'burst', points: burst, duration: 10 }));
          const theirs = new rlf.BurstyRateLimiter(new rlf.RateLimiterMemory(options), new rlf.RateLimiterMemory({ keyPrefix: 'burst', points: burst, duration: 10 }));
          await run(ours as unknown as Limiter, theirs as unknown as Limiter, ops);
        },
      ),
      { numRuns: 150 },
    );
  });
});
