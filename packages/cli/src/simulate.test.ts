import { boundary, burst } from './patterns.js';
import { ALGORITHM_ORDER, limitFor, simulate, slidingMax } from './simulate.js';

describe('the boundary attack on a tiny timeline: limit 3 per 1000 ms; 1 request at 0, 3 at 999, 3 at 1000', () => {
  const traffic = boundary({ limit: 3, windowMs: 1000, gapMs: 1 });
  const runs = simulate(traffic, ALGORITHM_ORDER, { limit: 3, windowMs: 1000 });
  const summary = (algorithm: string) => runs.find((run) => run.algorithm === algorithm)!.summary;
  const allowed = (algorithm: string) => runs.find((run) => run.algorithm === algorithm)!.outcomes.map((outcome) => outcome.allowed);

  test('fixed window: the window opened at 0 admits 2 more at 999 and the next window 3 at 1000, so 5 = 2 × limit − 1 pass within 2 ms', () => {
    expect(allowed('fixed-window')).toEqual([true, true, true, false, true, true, true]);
    // [999, 1999) holds 2 + 3. A window starting at a key's first hit cannot hold 2 × limit: the
    // request that opened it counts in it (an epoch-aligned window would let 2 × limit through).
    expect(summary('fixed-window')).toEqual({
      algorithm: 'fixed-window',
      offered: 7,
      admitted: 6,
      refused: 1,
      maxAdmittedInWindow: 5,
      worstRetryAfterSeconds: 1, // 1 ms left in the window, sent as 1 s
      worstRetryAfterMs: 1,
      worstDelayMs: 0,
    });
  });

  test('sliding log: never more than the limit in any window; the entry at 0 expires at 1000, freeing one', () => {
    expect(allowed('sliding-log')).toEqual([true, true, true, false, true, false, false]);
    expect(summary('sliding-log')).toMatchObject({ admitted: 4, refused: 3, maxAdmittedInWindow: 3, worstRetryAfterMs: 999, worstRetryAfterSeconds: 1 });
  });

  test('sliding-window counter (epoch-aligned): at 1000 the previous window counts in full, so nothing more passes', () => {
    expect(allowed('sliding-window')).toEqual([true, true, true, false, false, false, false]);
    expect(summary('sliding-window')).toMatchObject({ admitted: 3, refused: 4, maxAdmittedInWindow: 3 });
  });

  test('token bucket and GCRA: the bucket refilled to 3 by 999, then empty; at most burst + refill pass in a window', () => {
    for (const algorithm of ['token-bucket', 'gcra']) {
      expect(allowed(algorithm)).toEqual([true, true, true, true, false, false, false]);
      expect(summary(algorithm)).toMatchObject({ admitted: 4, refused: 3, maxAdmittedInWindow: 4 });
    }
  });

  test('delay: admitted requests are held one emission interval (333⅓ ms) apart, up to maxDelayMs (the window); the sliding max counts them when they pass', () => {
    const run = runs.find((r) => r.algorithm === 'delay')!;
    expect(allowed('delay')).toEqual([true, true, true, true, true, false, false]);
    // Pass times: 0; 999 (the queue is empty again), 1332⅓, 1665⅔; the one at 1000 is held 999 ms, to 1999.
    expect(run.outcomes.filter((o) => o.allowed).map((o) => Math.round(o.passMs))).toEqual([0, 999, 1332, 1666, 1999]);
    expect(run.summary).toMatchObject({ admitted: 5, refused: 2, maxAdmittedInWindow: 3, worstRetryAfterSeconds: 1 });
    expect(run.summary.worstDelayMs).toBeCloseTo(999, 6);
  });
});

describe('burst then steady: 10 at 0, then 10/s for 2 s against 5 per second', () => {
  const traffic = burst({ burst: 10, rate: 10, durationMs: 2000 });
  const runs = simulate(traffic, ['fixed-window', 'token-bucket'], { limit: 5, windowMs: 1000 });

  test('fixed window: 5 of the burst, then none until the window opened at 0 ends; 5 more from 1000', () => {
    expect(runs[0]!.summary).toMatchObject({ offered: 29, admitted: 10, refused: 19, maxAdmittedInWindow: 5, worstRetryAfterMs: 1000, worstRetryAfterSeconds: 1 });
  });

  test('token bucket: 5 of the burst, then one every 200 ms (at 200, 400, …, 1800): 5 + 4 within the first second', () => {
    expect(runs[1]!.summary).toMatchObject({ offered: 29, admitted: 14, refused: 15, maxAdmittedInWindow: 9, worstRetryAfterMs: 200, worstRetryAfterSeconds: 1 });
  });
});

test('Retry-After is what the header would send: whole seconds, rounded up (1100 ms → 2 s)', () => {
  // After a burst, the sliding-window counter waits for the previous window to weigh little enough.
  const runs = simulate(burst({ burst: 30, rate: 20, durationMs: 5000 }), ['sliding-window'], { limit: 10, windowMs: 1000 });
  expect(runs[0]!.summary.worstRetryAfterMs).toBe(1100);
  expect(runs[0]!.summary.worstRetryAfterSeconds).toBe(2);
  expect(runs[0]!.summary.worstRetryAfterMs).toBeGreaterThan(1000);
  expect(runs[0]!.summary.worstRetryAfterSeconds).toBe(Math.ceil(runs[0]!.summary.worstRetryAfterMs! / 1000));
});

test('each key has its own budget; the sliding max is per key', () => {
  const events = [0, 0, 0].flatMap((t) => [
    { t, key: 'a', cost: 1 },
    { t, key: 'b', cost: 1 },
  ]);
  const runs = simulate({ events, startMs: 0, durationMs: 1000, description: '' }, ['sliding-log'], { limit: 2, windowMs: 1000 });
  expect(runs[0]!.summary).toMatchObject({ admitted: 4, refused: 2, maxAdmittedInWindow: 2 });
});

test('a cost larger than the capacity can never pass: retryAfterMs Infinity, Retry-After finite', () => {
  const runs = simulate({ events: [{ t: 0, key: 'a', cost: 5 }], startMs: 0, durationMs: 1000, description: '' }, ['token-bucket'], { limit: 2, windowMs: 1000 });
  expect(runs[0]!.summary).toMatchObject({ refused: 1, worstRetryAfterMs: Infinity, worstRetryAfterSeconds: 1 });
});

describe('limitFor', () => {
  test('capacity and max delay go only to the algorithms that take them', () => {
    const settings = { limit: 5, windowMs: 1000, burst: 8, maxDelayMs: 300 };
    expect(limitFor('fixed-window', settings)).toEqual({ algorithm: 'fixed-window', limit: 5, windowMs: 1000 });
    expect(limitFor('gcra', settings)).toEqual({ algorithm: 'gcra', limit: 5, windowMs: 1000, burst: 8 });
    expect(limitFor('delay', settings)).toEqual({ algorithm: 'delay', limit: 5, windowMs: 1000, burst: 8, maxDelayMs: 300 });
  });
});

describe('slidingMax', () => {
  test('the most weight within any half-open [t, t + length)', () => {
    expect(slidingMax([], 1000)).toBe(0);
    expect(
      slidingMax(
        [
          [0, 1],
          [999, 1],
          [1000, 1],
        ],
        1000,
      ),
    ).toBe(2);
    expect(
      slidingMax(
        [
          [1000, 1],
          [0, 1],
          [999, 1],
        ],
        1001,
      ),
    ).toBe(3);
    expect(
      slidingMax(
        [
          [0, 2],
          [500, 0.5],
          [1400, 3],
        ],
        1000,
      ),
    ).toBe(3.5);
  });
});
