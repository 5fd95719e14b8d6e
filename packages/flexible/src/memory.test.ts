import fc from 'fast-check';
import { RateLimiterMemory } from './memory.js';
import type { RateLimiterMemoryOptions } from './memory.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** A limiter on a clock the test moves. */
function onClock(opts: RateLimiterMemoryOptions): { limiter: RateLimiterMemory; at: (ms: number) => void } {
  let nowMs = 0;
  const limiter = new RateLimiterMemory({ ...opts, now: () => nowMs });
  return { limiter, at: (ms) => (nowMs = ms) };
}

/** 'ok consumed/remaining/msBeforeNext' or 'refused …'. */
async function outcome(call: Promise<RateLimiterRes>): Promise<string> {
  try {
    const res = await call;
    return `ok ${res.consumedPoints}/${res.remainingPoints}/${res.msBeforeNext}`;
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return `refused ${rejection.consumedPoints}/${rejection.remainingPoints}/${rejection.msBeforeNext}`;
  }
}

describe('RateLimiterMemory: a fixed window from the first consume (rlf 11.4)', () => {
  it('points 2 per 1 s: refusals count, the window restarts at the first consume after it ends', async () => {
    const { limiter, at } = onClock({ points: 2, duration: 1 });
    const timeline: Array<[number, string]> = [
      [0, 'ok 1/1/1000'],
      [400, 'ok 2/0/600'],
      [900, 'refused 3/0/100'],
      [1000, 'ok 1/1/1000'], // window 1 ended at 1000: a new one starts here
      [1500, 'ok 2/0/500'],
    ];
    for (const [ms, expected] of timeline) {
      at(ms);
      expect([ms, await outcome(limiter.consume('k'))]).toEqual([ms, expected]);
    }
  });

  it('blockDuration: the consume that first crosses points blocks the key from then', async () => {
    const { limiter, at } = onClock({ points: 1, duration: 1, blockDuration: 5 });
    const timeline: Array<[number, string]> = [
      [0, 'ok 1/0/1000'],
      [200, 'refused 2/0/5000'], // crosses: rewritten to last 5 s from 200
      [3000, 'refused 3/0/2200'], // still blocked, not re-blocked
      [5200, 'ok 1/0/1000'],
    ];
    for (const [ms, expected] of timeline) {
      at(ms);
      expect([ms, await outcome(limiter.consume('k'))]).toEqual([ms, expected]);
    }
  });

  it('customDuration sets a new window’s length for that call', async () => {
    const { limiter } = onClock({ points: 5, duration: 1 });
    expect(await outcome(limiter.consume('k', 1, { customDuration: 30 }))).toBe('ok 1/4/30000');
  });

  it('duration 0 never expires (msBeforeNext -1)', async () => {
    const { limiter } = onClock({ points: 5, duration: 0 });
    expect(await outcome(limiter.consume('k'))).toBe('ok 1/4/-1');
  });

  it('penalty, reward, get, set, block, delete', async () => {
    const { limiter, at } = onClock({ points: 3, duration: 10 });
    expect(await outcome(limiter.penalty('k', 2))).toBe('ok 2/1/10000');
    expect(await outcome(limiter.reward('k', 5))).toBe('ok -3/6/10000');
    expect((await limiter.set('k', 3, 2)).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 2000, consumedPoints: 3, isFirstInDuration: false });
    at(1000);
    expect((await limiter.get('k'))?.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 3, isFirstInDuration: false });
    expect((await limiter.block('b', 0)).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: -1, consumedPoints: 4, isFirstInDuration: false });
    expect(await limiter.delete('k')).toBe(true);
    expect(await limiter.delete('k')).toBe(false);
    expect(await limiter.get('k')).toBeNull();
  });

  it('set without secDuration uses duration (rlf documents it; rlf’s Memory stores such a key forever)', async () => {
    const { limiter, at } = onClock({ points: 3, duration: 10 });
    await limiter.set('k', 1);
    at(10_000);
    expect(await limiter.get('k')).toBeNull();
  });

  it('an ended window reads as absent, with no timer having run', async () => {
    const { limiter, at } = onClock({ points: 3, duration: 1 });
    await limiter.consume('k');
    at(1000);
    expect(await limiter.get('k')).toBeNull();
    expect(await limiter.delete('k')).toBe(false);
  });

  it('truncates points to an integer, as rlf’s record does', async () => {
    const { limiter } = onClock({ points: 3, duration: 1 });
    expect((await limiter.consume('k', 1.7)).consumedPoints).toBe(1);
  });

  it('execEvenly resolves a non-first consume after rlf’s delay', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const limiter = new RateLimiterMemory({ points: 4, duration: 1, execEvenly: true });
      await limiter.consume('k');
      let settled: RateLimiterRes | undefined;
      void limiter.consume('k').then((res) => (settled = res));
      await jest.advanceTimersByTimeAsync(249);
      expect(settled).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      expect(settled?.msBeforeNext).toBe(750);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('RateLimiterMemory dump/restore (rlf 11.1+)', () => {
  it('dumps live keys without their prefix, and restores them under another prefix', async () => {
    const { limiter, at } = onClock({ points: 3, duration: 10, keyPrefix: 'a' });
    await limiter.consume('k', 2);
    await limiter.block('forever', 0);
    await limiter.set('gone', 1, 1);
    at(1000);
    const snapshot = limiter.dump();
    expect(snapshot).toEqual({
      version: 1,
      dumpedAt: 1000,
      storage: [
        { key: 'k', value: 2, expiresAt: 10_000 },
        { key: 'forever', value: 4, expiresAt: null },
      ],
    });
    const other = onClock({ points: 3, duration: 10, keyPrefix: 'b' });
    other.at(2000);
    expect(other.limiter.restore(snapshot)).toEqual({ invalid: 0, expired: 0, restored: 2 });
    expect(await outcome(other.limiter.consume('k'))).toBe('ok 3/0/8000');
  });

  it('counts invalid and expired entries, with keys on detailResponse; a non-v1 snapshot gives undefined', () => {
    const { limiter, at } = onClock({ points: 3, duration: 10 });
    at(5000);
    const data = {
      version: 1,
      storage: [null, { key: {}, value: 1, expiresAt: null }, { key: 'old', value: 1, expiresAt: 4000 }, { key: 'ok', value: 1, expiresAt: 6000 }],
    } as unknown as Parameters<RateLimiterMemory['restore']>[0];
    expect(limiter.restore(data)).toEqual({ invalid: 2, expired: 1, restored: 1 });
    expect(limiter.restore(data, true)).toEqual({
      invalid: { count: 2, keys: ['N/A', {}] },
      expired: { count: 1, keys: ['old'] },
      restored: { count: 1, keys: ['ok'] },
    });
    expect(limiter.restore({ version: 2, storage: [] })).toBeUndefined();
  });
});

describe('RateLimiterMemory’s store: bounded, without timers, never forgetting a live window', () => {
  it.each([[0], [1.5], ['10']])('refuses maxKeys %p with a RateKitOptionError naming it', (maxKeys) => {
    expect(() => new RateLimiterMemory({ points: 1, duration: 1, maxKeys: maxKeys as number })).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'maxKeys' }) as Error);
  });

  it('sweeps ended windows once it reaches maxKeys', async () => {
    const { limiter, at } = onClock({ points: 1, duration: 1, maxKeys: 4 });
    for (const key of ['a', 'b', 'c', 'd']) await limiter.consume(key);
    at(1000);
    await limiter.consume('e'); // a–d have ended: swept
    expect([...limiter._memoryStorage._storage.keys()]).toEqual(['rlflx:e']);
  });

  it('keeps a refused key through a flood of new keys (it grows instead of resetting it)', async () => {
    const { limiter } = onClock({ points: 1, duration: 60, maxKeys: 10 });
    await limiter.consume('victim', 2).catch(() => undefined);
    for (let i = 0; i < 100; i++) await limiter.consume(`flood${i}`);
    expect(await outcome(limiter.consume('victim'))).toBe('refused 3/0/60000');
  });

  it('property: within one window, admitted points never exceed `points`, whatever the order, costs, keys and times', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), cost: fc.integer({ min: 1, max: 4 }), stepMs: fc.integer({ min: 0, max: 700 }) }), { maxLength: 60 }),
        async (points, durationSec, maxKeys, calls) => {
          const { limiter, at } = onClock({ points, duration: durationSec, maxKeys });
          /** Per key: when its window started and the points admitted in it. */
          const windows = new Map<string, { startMs: number; admitted: number }>();
          let nowMs = 0;
          for (const { key, cost, stepMs } of calls) {
            nowMs += stepMs;
            at(nowMs);
            try {
              const res = await limiter.consume(key, cost);
              let window = windows.get(key);
              // A new window may start only once the key's previous one has ended (no early reset).
              if (res.isFirstInDuration && window !== undefined && nowMs < window.startMs + durationSec * 1000) return false;
              if (res.isFirstInDuration || window === undefined) windows.set(key, (window = { startMs: nowMs, admitted: 0 }));
              window.admitted += cost;
              if (window.admitted > points) return false;
              if (nowMs - window.startMs >= durationSec * 1000) return false; // an admission must fall in its window
            } catch (rejection) {
              if (!(rejection instanceof RateLimiterRes)) throw rejection;
            }
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});
