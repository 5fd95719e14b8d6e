// Work after the response: waitUntil.
// Written against the runtime matrix's subset of jest, so it runs on Node (jest), Bun, Deno and workerd alike.
import type { RateKitError } from '@ratekit/core';
import { rateLimit } from '@ratekit/fetch';
import { CLIENT, get, T0, testClock } from './test-support.js';

describe('rateLimit: background work', () => {
  const clock = testClock();
  const now = clock.now;
  beforeEach(() => {
    clock.t = T0;
  });

  describe('waitUntil', () => {
    it('hands onDecision’s work to the call’s context and answers without waiting for it', async () => {
      const handed: Array<Promise<unknown>> = [];
      let finish: () => void = () => undefined;
      const seen: string[] = [];
      const limit = rateLimit({
        now,
        onDecision: (decision, _request, key) =>
          new Promise<void>((resolve) => {
            finish = () => {
              seen.push(`${key}: ${decision.remaining}`);
              resolve();
            };
          }),
      });
      const result = await limit(get(), { ip: CLIENT, context: { waitUntil: (promise) => handed.push(promise) } });
      expect(result.allowed).toBe(true);
      expect(handed).toHaveLength(1);
      expect(seen).toEqual([]); // answered while the work is still pending
      finish();
      await handed[0];
      expect(seen).toEqual([`${CLIENT}: 4`]);
    });

    it('awaits the work when the call gives no context, and reports its failure to onError, not to the response', async () => {
      const errors: RateKitError[] = [];
      const limit = rateLimit({ now, onError: (error) => errors.push(error), onDecision: () => Promise.reject(new Error('metrics down')) });
      const result = await limit(get(), { ip: CLIENT });
      expect(result.allowed).toBe(true);
      expect(errors).toHaveLength(1);
      expect(errors[0]?.message).toContain('metrics down');
    });

    it('reports a failure handed to waitUntil to onError too, and never hands over a rejecting promise', async () => {
      const errors: RateKitError[] = [];
      const handed: Array<Promise<unknown>> = [];
      const limit = rateLimit({ now, onError: (error) => errors.push(error), onDecision: () => Promise.reject(new Error('metrics down')) });
      await limit(get(), { ip: CLIENT, context: { waitUntil: (promise) => handed.push(promise) } });
      await expect(handed[0]).resolves.toBeUndefined();
      expect(errors.map((error) => error.message)).toEqual([expect.stringContaining('metrics down')]);
    });
  });
});
