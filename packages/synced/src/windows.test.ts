import { WindowCounters } from './windows.js';

const W = 1_000;
const T = 1_700_000_000_000;

describe('WindowCounters', () => {
  describe('a new set of counters', () => {
    it('reads 0 for any window and holds nothing', () => {
      const counters = new WindowCounters();
      expect([counters.raw(T), counters.used(T), counters.size, counters.hasPending]).toEqual([0, 0, 0, false]);
    });
  });

  describe('adding usage', () => {
    it('sums deltas per window, and only own deltas become pending', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, 2, true);
      counters.add(T, T + W, 3, false);
      counters.add(T + W, T + 2 * W, 1, false);
      expect(counters.snapshot()).toEqual([
        [T, T + W, 5, 2],
        [T + W, T + 2 * W, 1, 0],
      ]);
      expect(counters.hasPending).toBe(true);
    });

    it('keeps the latest expiry a window was given', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, 1, false);
      counters.add(T, T + 2 * W, 1, false);
      counters.add(T, T + W, 1, false);
      expect(counters.snapshot()).toEqual([[T, T + 2 * W, 3, 0]]);
    });

    it('gives the same counts whatever order the deltas arrive in (addition commutes)', () => {
      const deltas = [3, -1, 2.5, 4, -2, 0.5];
      const forward = new WindowCounters();
      const backward = new WindowCounters();
      for (const d of deltas) forward.add(T, T + W, d, false);
      for (const d of [...deltas].reverse()) backward.add(T, T + W, d, false);
      expect(forward.raw(T)).toBe(7);
      expect(backward.raw(T)).toBe(forward.raw(T));
    });
  });

  describe('a refund that overtakes the admission it gives back', () => {
    it('leaves a negative raw count but reports 0 used, and settles once the admission arrives', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, -2, false);
      expect([counters.raw(T), counters.used(T)]).toEqual([-2, 0]);
      counters.add(T, T + W, 5, false);
      expect([counters.raw(T), counters.used(T)]).toEqual([3, 3]);
    });
  });

  describe('taking the pending deltas for a sync', () => {
    it('appends (start, expiry, delta) triples of live windows, zeroes them, and drops those of expired windows', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, 4, true);
      counters.add(T + W, T + 2 * W, 2, true);
      counters.add(T + W, T + 2 * W, 7, false);
      const out: number[] = [];
      expect(counters.takePending(T + W, out)).toBe(1);
      expect(out).toEqual([T + W, T + 2 * W, 2]);
      expect(counters.hasPending).toBe(false);
      // Counts are untouched: the usage still counts here.
      expect([counters.raw(T), counters.raw(T + W)]).toEqual([4, 9]);
    });

    it('puts a failed publication back with restorePending, adding to what accrued meanwhile, without counting it twice', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, 3, true);
      const out: number[] = [];
      counters.takePending(T, out);
      counters.add(T, T + W, 1, true);
      counters.restorePending(out[0]!, out[1]!, out[2]!);
      expect(counters.snapshot()).toEqual([[T, T + W, 4, 4]]);
    });

    it('keeps a restored delta even if its window was pruned meanwhile', () => {
      const counters = new WindowCounters();
      counters.restorePending(T, T + W, 2);
      expect(counters.snapshot()).toEqual([[T, T + W, 0, 2]]);
    });
  });

  describe('pruning', () => {
    it('drops windows expired at or before the time given, pending deltas included, and keeps the rest in place', () => {
      const counters = new WindowCounters();
      counters.add(T, T + W, 1, true);
      counters.add(T + W, T + 3 * W, 2, true);
      counters.add(T + 2 * W, T + 3 * W, 3, false);
      expect(counters.prune(T + W)).toBe(2);
      expect(counters.snapshot()).toEqual([
        [T + W, T + 3 * W, 2, 2],
        [T + 2 * W, T + 3 * W, 3, 0],
      ]);
      expect(counters.prune(T + 3 * W)).toBe(0);
      expect(counters.size).toBe(0);
    });
  });
});
