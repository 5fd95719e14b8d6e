import { memoryStore, type RateLimitStore, resolveLimit } from '@ratekit/core';
import fc from 'fast-check';
import { compareSchedule, differ, scheduleArbitrary, type Schedule } from './differential.js';

/** A store that is the memory store, except that it rounds the clock down to 10 ms: a subtle, realistic bug. */
function coarseClockStore(): RateLimitStore {
  const inner = memoryStore({ maxKeys: 1_000, pruneIntervalMs: 0 });
  return { ...inner, name: 'coarse-clock', evaluate: (request) => inner.evaluate({ ...request, nowMs: Math.floor(request.nowMs / 10) * 10 }) };
}

describe('compareSchedule', () => {
  const schedule: Schedule = {
    limits: [{ algorithm: 'gcra', limit: 2, windowMs: 1_000 }],
    startMs: 1_700_000_000_000,
    requests: [
      { dtMs: 0, cost: 1, mode: 'consume' },
      { dtMs: 0, cost: 1, mode: 'consume' },
      { dtMs: 5, cost: 1, mode: 'consume' },
    ],
  };

  describe('when the store agrees with the in-memory store', () => {
    it('resolves', async () => {
      await expect(compareSchedule(memoryStore({ pruneIntervalMs: 0 }), schedule)).resolves.toBeUndefined();
    });
  });

  describe('when the store decides differently', () => {
    it('rejects, naming the request and the field', async () => {
      await expect(compareSchedule(coarseClockStore(), schedule)).rejects.toThrow(/Request #2 \(consume, cost 1, at start \+ 5 ms\) differs at resetMs/);
    });

    it('is found by random schedules', async () => {
      const store = coarseClockStore();
      await expect(
        fc.assert(
          fc.asyncProperty(scheduleArbitrary(['token-bucket']), (s) => compareSchedule(store, s)),
          { numRuns: 200, seed: 42 },
        ),
      ).rejects.toThrow(/Property failed/);
    });
  });
});

describe('differ', () => {
  const decision = memoryStore({ pruneIntervalMs: 0 }).evaluate({
    key: 'k',
    namespace: '',
    limits: [resolveLimit({ algorithm: 'gcra', limit: 3, windowMs: 1_000 })],
    cost: 1,
    mode: 'consume',
    nowMs: 1_700_000_000_000,
  });

  it('finds nothing between a decision and itself', () => {
    expect(differ(decision, structuredClone(decision))).toBeUndefined();
  });

  it('forgives a last-bit float difference', () => {
    const tokensAfter = decision.limits[0]!.tokensAfter;
    const nudged = { ...decision, limits: [{ ...decision.limits[0]!, tokensAfter: tokensAfter + tokensAfter * 1e-15 }] };
    expect(differ(decision, nudged)).toBeUndefined();
  });

  it.each([
    ['allowed', { allowed: false }],
    ['remaining', { remaining: 1 }],
    ['retryAfterMs', { retryAfterMs: Infinity }],
    ['policy', { policy: 'other' }],
  ])('reports a different %s', (field, change) => {
    expect(differ(decision, { ...decision, ...change })).toBe(field);
  });

  it('reports a truncated fraction inside a limit', () => {
    const truncated = { ...decision, limits: [{ ...decision.limits[0]!, nextRefillMs: Math.trunc(decision.limits[0]!.nextRefillMs) }] };
    expect(decision.limits[0]!.nextRefillMs % 1).not.toBe(0);
    expect(differ(decision, truncated)).toBe('limits[0].nextRefillMs');
  });
});
