import type { Decision } from '../decision';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import { cachedPolicyCount, MAX_CACHED, policyEntry, policyList } from './policy-cache';

/** One decision of a fresh limiter at a fixed instant. */
function decide(limits: LimitsOption<unknown>): Decision {
  const limiter = createLimiter({ limits, store: memoryStore({ maxKeys: 16, pruneIntervalMs: 0 }), now: () => 1_795_262_400_000 });
  return limiter.consume('k') as Decision;
}

describe('policyList', () => {
  describe('given the same limits in two decisions', () => {
    it('returns the same cached list, so its header text is built once', () => {
      const limits = [
        { limit: 10, windowMs: 1_000 },
        { limit: 100, windowMs: 60_000 },
      ];
      const first = policyList(decide(limits).limits);
      const again = policyList(decide(limits).limits);
      expect(again).toBe(first);
      expect(again.draft6).toBe(first.draft6);
      expect(again.draft6).toBe('10;w=1, 100;w=60');
    });
  });

  describe('given limits that share a name but not a quota (a free and a paid plan)', () => {
    it('keeps one entry per quota and window', () => {
      const free = policyList(decide({ limit: 10, windowMs: 60_000, name: 'plan' }).limits);
      const paid = policyList(decide({ limit: 100, windowMs: 60_000, name: 'plan' }).limits);
      expect(free).not.toBe(paid);
      expect(free.draft8Joined(undefined)).toBe('"plan"; q=10; w=60');
      expect(paid.draft8Joined(undefined)).toBe('"plan"; q=100; w=60');
    });
  });

  describe('given the same limits in another order', () => {
    it('keeps the order of the policy', () => {
      const a = { limit: 10, windowMs: 1_000 };
      const b = { limit: 100, windowMs: 60_000 };
      expect(policyList(decide([b, a]).limits).draft6).toBe('100;w=60, 10;w=1');
    });
  });

  describe('draft-6 quota de-duplication', () => {
    // [limits as [quota, windowMs], RateLimit-Policy]
    it.each<[Array<[number, number]>, string]>([
      [
        [
          [10, 1_000],
          [10, 60_000],
        ],
        '10;w=60',
      ],
      [
        [
          [10, 60_000],
          [10, 1_000],
        ],
        '10;w=60',
      ],
      [
        [
          [10, 1_000],
          [100, 60_000],
          [10, 60_000],
        ],
        '100;w=60, 10;w=60',
      ],
      [
        [
          [5, 1_000],
          [10, 1_000],
          [5, 2_000],
        ],
        '10;w=1, 5;w=2',
      ],
    ])('lists %j as %s', (limits, expected) => {
      const list = policyList(limits.map(([quota, windowMs], i) => ({ name: `l${i}`, quota, windowMs })));
      expect(list.draft6).toBe(expected);
    });

    it('keeps the first of two identical quota and window pairs', () => {
      const list = policyList([
        { name: 'a', quota: 10, windowMs: 60_000 },
        { name: 'b', quota: 10, windowMs: 60_000 },
      ]);
      expect(list.draft6).toBe('10;w=60');
    });
  });

  describe('given more distinct limits than the cache holds', () => {
    it('stays bounded and still gives the right text', () => {
      for (let i = 0; i < MAX_CACHED + 100; i++) policyEntry({ name: `dyn-${i}`, quota: i, windowMs: 1_000 });
      expect(cachedPolicyCount()).toBeLessThanOrEqual(MAX_CACHED);
      expect(policyList([{ name: 'dyn-7', quota: 7, windowMs: 1_000 }]).draft8Joined('canonical')).toBe('"dyn-7";q=7;w=1');
    });
  });

  it('gives the empty list for a decision without limits', () => {
    expect(policyList([]).entries).toHaveLength(0);
  });
});
