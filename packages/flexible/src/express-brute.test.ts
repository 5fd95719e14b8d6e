import { createRequire } from 'node:module';
import fc from 'fast-check';
import { type BruteFailCallback, type BruteRequest, ExpressBruteFlexible } from './index.js';

// rlf ships ExpressBruteFlexible at a deep path only.
const RlfExpressBruteFlexible = createRequire(__filename)('rate-limiter-flexible/lib/ExpressBruteFlexible') as typeof ExpressBruteFlexible;

/** Sat, 21 Nov 2026 12:00:00 GMT. Both read Date.now() (and rlf's memory store its timers), which are faked. */
const T0 = 1_795_262_400_000;
beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

type Outcome = 'passed' | `refused, next in ${number} s`;

/** Sends one request through `middleware` and settles with what it did. */
function send(middleware: (req: never, res: never, next: () => void) => void, ip: string, outcomes: Outcome[]): Promise<void> {
  return new Promise((resolve) => {
    const req = { ip, failed: (outcome: Outcome) => (outcomes.push(outcome), resolve()) };
    middleware(req as never, {} as never, () => {
      outcomes.push('passed');
      resolve();
    });
  });
}

/** A failCallback that reports the wait to the request (whole seconds: both round their delays to seconds). */
const report: BruteFailCallback = (req, _res, _next, nextValidRequestDate) =>
  (req as unknown as { failed(o: Outcome): void }).failed(`refused, next in ${Math.round((nextValidRequestDate.getTime() - Date.now()) / 1000)} s`);

describe('ExpressBruteFlexible', () => {
  it('hashes keys as rlf does, so both read the same data', () => {
    expect(ExpressBruteFlexible._getKey(['127.0.0.1', 'brute1', 'login'])).toBe(RlfExpressBruteFlexible._getKey(['127.0.0.1', 'brute1', 'login']));
    expect(ExpressBruteFlexible._getKey([undefined, 'brute1', ''])).toBe(RlfExpressBruteFlexible._getKey([undefined, 'brute1', '']));
  });

  it('computes the same Fibonacci delays and lifetime as rlf', () => {
    const options = { freeRetries: 3, minWait: 1_000, maxWait: 30_000 };
    const ours = new ExpressBruteFlexible('memory', options);
    const theirs = new RlfExpressBruteFlexible('memory', options);
    expect(ours.delays).toEqual(theirs.delays);
    expect(ours.delays).toEqual([1_000, 1_000, 2_000, 3_000, 5_000, 8_000, 13_000, 21_000, 30_000]);
    expect(ours.options.lifetime).toBe(theirs.options.lifetime);
  });

  it("throws rlf's error for an unknown limiter type", () => {
    expect(() => new ExpressBruteFlexible('cassandra')).toThrow('Unknown limiter type. Use one of LIMITER_TYPES constants.');
    expect(() => new ExpressBruteFlexible('sqlite')).toThrow('Unknown limiter type. Use one of LIMITER_TYPES constants.');
  });

  it('lets freeRetries through, then makes each request wait out a delay growing as Fibonacci (the express-brute rule)', async () => {
    const brute = new ExpressBruteFlexible('memory', { freeRetries: 2, minWait: 1_000, maxWait: 10_000, failCallback: report });
    const outcomes: Outcome[] = [];
    // The free requests (the last of them starts the first delay), then two inside it.
    for (let i = 0; i < 4; i++) await send(brute.prevent, '203.0.113.7', outcomes);
    // After each delay one request passes and starts the next: 1 s, 1 s, 2 s, 3 s.
    for (const waitMs of [1_000, 1_000, 2_000]) {
      await jest.advanceTimersByTimeAsync(waitMs);
      await send(brute.prevent, '203.0.113.7', outcomes);
      await send(brute.prevent, '203.0.113.7', outcomes);
    }
    expect(outcomes).toEqual([
      'passed',
      'passed',
      'refused, next in 1 s',
      'refused, next in 1 s',
      'passed',
      'refused, next in 1 s',
      'passed',
      'refused, next in 2 s',
      'passed',
      'refused, next in 3 s',
    ]);
  });

  it('answers as rlf does, request by request, on random traffic (memory)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ freeRetries: fc.integer({ min: 0, max: 4 }), minWait: fc.constantFrom(1_000, 2_000), maxWait: fc.constantFrom(5_000, 20_000) }),
        fc.array(fc.record({ ip: fc.constantFrom('203.0.113.7', '198.51.100.2'), gapMs: fc.constantFrom(0, 0, 400, 1_000, 3_000, 25_000) }), { maxLength: 30 }),
        async (options, requests) => {
          const ours = new ExpressBruteFlexible('memory', { ...options, failCallback: report });
          const theirs = new RlfExpressBruteFlexible('memory', { ...options, failCallback: report });
          const oursSeen: Outcome[] = [];
          const theirsSeen: Outcome[] = [];
          for (const { ip, gapMs } of requests) {
            await jest.advanceTimersByTimeAsync(gapMs);
            await send(ours.prevent, ip, oursSeen);
            await send(theirs.prevent, ip, theirsSeen);
          }
          expect(oursSeen).toEqual(theirsSeen);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('resets a key through req.brute.reset and through reset(ip, key)', async () => {
    const brute = new ExpressBruteFlexible('memory', { freeRetries: 1, minWait: 5_000, failCallback: report });
    const outcomes: Outcome[] = [];
    const req: BruteRequest = { ip: '203.0.113.7' };
    await new Promise<void>((resolve) => brute.prevent(req, {} as never, () => resolve()));
    await send(brute.prevent, '203.0.113.7', outcomes);
    await new Promise<void>((resolve) => req.brute!.reset(() => resolve()));
    await send(brute.prevent, '203.0.113.7', outcomes);
    await send(brute.prevent, '203.0.113.7', outcomes);
    await new Promise<void>((resolve) => brute.reset('203.0.113.7', undefined, () => resolve()));
    await send(brute.prevent, '203.0.113.7', outcomes);
    // freeRetries 1: the first request passes and starts a 5 s delay; each reset ends it.
    expect(outcomes).toEqual(['refused, next in 5 s', 'passed', 'refused, next in 5 s', 'passed']);
  });
});
