import { createLimiter } from '../limiter.js';
import type { Decision } from '../decision.js';
import { memoryStore } from '../stores/memory.js';
import { bindingLimit, bindingQuota } from './advertised-policy.js';

describe('bindingLimit', () => {
  const limiter = createLimiter({
    limits: [
      { limit: 1, windowMs: 1_000, name: 'second' },
      { limit: 10, windowMs: 60_000, name: 'minute' },
    ],
    store: memoryStore({ pruneIntervalMs: 0 }),
    now: () => 0,
  });

  it("is the limit named by the decision's policy, the first one until another binds", () => {
    const first = limiter.consume('k') as Decision;
    expect([bindingLimit(first)?.name, bindingQuota(first)]).toEqual([first.policy, bindingLimit(first)?.limit]);
    const refused = limiter.consume('k') as Decision;
    expect(refused.allowed).toBe(false);
    expect(bindingLimit(refused)).toMatchObject({ name: 'second', windowMs: 1_000 });
  });

  it('is undefined for a decision without limits', () => {
    expect(bindingLimit({ limits: [], policy: 'x' } as unknown as Decision)).toBeUndefined();
  });
});
