/**
 * `Algorithm.step`'s `into` argument (the memory store's in-place update):
 * a step given `into` reports exactly what the same step without it reports,
 * writes the admitted next state into `into` (leaving a refusal's `into`
 * untouched), and so threads the same states through any schedule.
 */
import fc from 'fast-check';
import { ALGORITHMS, type AlgorithmName } from '../limit';
import { algorithms } from './index';
import { costArb, gapsArb, limitOf, schedule } from '../test-support/algorithms';
import type { LimitState, Step } from './types';

const STATE_LENGTH: Record<AlgorithmName, number | undefined> = {
  'fixed-window': 2,
  'sliding-window': 3,
  'token-bucket': 2,
  gcra: 1,
  delay: 1,
  'sliding-log': undefined, // varies: in place when `into` has the next log's length
};

describe('step(state, limit, cost, nowMs, into)', () => {
  it.each(ALGORITHMS)('%s: reports what step without `into` reports, and writes only an admitted next state into it', (name) => {
    const algorithm = algorithms[name];
    const limit = limitOf({ algorithm: name, limit: 5, windowMs: 1_000, maxDelayMs: name === 'delay' ? 400 : undefined });
    fc.assert(
      fc.property(gapsArb(700, costArb(6)), fc.boolean(), (gaps, aliased) => {
        let state: LimitState | undefined;
        for (const [t, cost] of schedule(1_700_000_000_000, gaps)) {
          const expected = algorithm.step(state, limit, cost, t);
          const before = state === undefined ? undefined : [...state];
          // The store passes the stored array itself; a separate array of the same length must behave the same.
          const into = state === undefined ? undefined : aliased ? [...state] : state.map(() => -1);
          const given = aliased && into !== undefined ? into : state;
          const seen: Step = algorithm.step(given, limit, cost, t, into);
          expect({ ...seen, next: [...seen.next] }).toEqual({ ...expected, next: [...expected.next] });
          const inPlace = into !== undefined && expected.allowed && into.length === (STATE_LENGTH[name] ?? expected.next.length);
          expect(seen.next === into).toBe(inPlace);
          if (into !== undefined && !inPlace) expect(into).toEqual(aliased ? before : before!.map(() => -1));
          if (!aliased && state !== undefined) expect(state).toEqual(before); // `state` itself is never written
          state = expected.allowed ? expected.next : (expected.nextIfRefused ?? state);
        }
      }),
      { numRuns: 300 },
    );
  });
});
