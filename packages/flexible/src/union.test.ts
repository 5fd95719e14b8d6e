import { RateKitOptionError } from '@ratekit/core';
import fc from 'fast-check';
import * as rlf from 'rate-limiter-flexible';
import type { AllOrNothingAnswer, AllOrNothingEntry } from './all-or-nothing.js';
import { RLWrapperBlackAndWhite } from './black-and-white.js';
import { RateLimiterCompatibleAbstract } from './compatible-abstract.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { isRateLimiterUnionRejection, RateLimiterUnion } from './union.js';

const T0 = 1_700_000_000_000;

/** What a union call settled with, as plain data. */
async function settle(call: Promise<Record<string, unknown>>): Promise<{ resolved: boolean; value: Record<string, unknown> }> {
  const plain = (value: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(value).map(([prefix, res]) => [prefix, res instanceof Error ? `Error: ${res.message}` : (res as RateLimiterRes).toJSON()]));
  return call.then(
    (value) => ({ resolved: true, value: plain(value) }),
    (value: Record<string, unknown>) => ({ resolved: false, value: plain(value) }),
  );
}

/** A limiter on another store that takes part in all-or-nothing calls. */
class OtherStoreLimiter extends RateLimiterCompatibleAbstract {
  readonly _allOrNothingStore = {};
  override get keyPrefix(): string {
    return 'other';
  }
  _consumeAllOrNothing(entries: readonly AllOrNothingEntry[]): Promise<AllOrNothingAnswer> {
    return Promise.resolve({ admitted: true, outcomes: entries.map((e) => ({ consumedPoints: e.points, msBeforeNext: e.msDuration })) });
  }
}

/** A store limiter whose store is down, with a memory limiter as its insurance. */
const deadStore = {};
class DeadStoreLimiter extends RateLimiterCompatibleAbstract {
  readonly _allOrNothingStore = deadStore;
  constructor(
    private readonly prefix: string,
    readonly points: number,
    readonly duration: number,
    readonly insuranceLimiter?: RateLimiterMemory,
  ) {
    super();
  }
  override get keyPrefix(): string {
    return this.prefix;
  }
  override get blockDuration(): number {
    return 0;
  }
  override get execEvenly(): boolean {
    return false;
  }
  getKey(key: string | number): string {
    return `${this.prefix}:${key}`;
  }
  _consumeAllOrNothing(): Promise<AllOrNothingAnswer> {
    return Promise.reject(new Error('store down'));
  }
}

describe('RateLimiterUnion', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const pair = () => ({
    second: new RateLimiterMemory({ keyPrefix: 'second', points: 1, duration: 1 }),
    minute: new RateLimiterMemory({ keyPrefix: 'minute', points: 2, duration: 60 }),
  });

  describe('by default (rlf: each limiter charged on its own)', () => {
    it('resolves with every limiter result keyed by keyPrefix', async () => {
      const { second, minute } = pair();
      const { resolved, value } = await settle(new RateLimiterUnion(second, minute).consume('k'));
      expect(resolved).toBe(true);
      expect(value).toEqual({
        second: { remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true },
        minute: { remainingPoints: 1, msBeforeNext: 60000, consumedPoints: 1, isFirstInDuration: true },
      });
    });

    it('rejects with only the refusing limiters, and keeps what the others charged', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute);
      await union.consume('k');
      const { resolved, value } = await settle(union.consume('k'));
      expect(resolved).toBe(false);
      expect(Object.keys(value)).toEqual(['second']);
      expect((await minute.get('k'))?.consumedPoints).toBe(2); // charged although the union refused (rlf #280)
    });

    it('puts a store Error under its limiter prefix', async () => {
      const { second, minute } = pair();
      jest.spyOn(minute, 'consume').mockRejectedValue(new Error('store down'));
      const { resolved, value } = await settle(new RateLimiterUnion(second, minute).consume('k'));
      expect(resolved).toBe(false);
      expect(value).toEqual({ minute: 'Error: store down' });
    });

    it('answers exactly as rate-limiter-flexible 11.4 over the same sequence', async () => {
      const ours = new RateLimiterUnion(new RateLimiterMemory({ keyPrefix: 'a', points: 3, duration: 1 }), new RateLimiterMemory({ keyPrefix: 'b', points: 5, duration: 3 }));
      const theirs = new rlf.RateLimiterUnion(new rlf.RateLimiterMemory({ keyPrefix: 'a', points: 3, duration: 1 }), new rlf.RateLimiterMemory({ keyPrefix: 'b', points: 5, duration: 3 }));
      const steps: Array<[key: string, points: number, advanceMs: number]> = [
        ['k', 1, 0],
        ['k', 2, 100],
        ['k', 1, 0],
        ['j', 4, 0],
        ['k', 1, 900],
        ['k', 2, 0],
        ['k', 1, 1500],
        ['k', 1, 600],
        ['j', 1, 0],
      ];
      for (const [key, points, advanceMs] of steps) {
        await jest.advanceTimersByTimeAsync(advanceMs);
        expect(await settle(ours.consume(key, points))).toEqual(await settle(theirs.consume(key, points) as Promise<Record<string, unknown>>));
      }
    });
  });

  describe('with { allOrNothing: true }', () => {
    it('resolves as the default union does when every limiter admits', async () => {
      const { second, minute } = pair();
      const { resolved, value } = await settle(new RateLimiterUnion(second, minute, { allOrNothing: true }).consume('k'));
      expect(resolved).toBe(true);
      expect(value).toEqual({
        second: { remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true },
        minute: { remainingPoints: 1, msBeforeNext: 60000, consumedPoints: 1, isFirstInDuration: true },
      });
    });

    it('charges no limiter when one refuses, and reports the refusing ones as rlf would', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute, { allOrNothing: true });
      await union.consume('k');
      await jest.advanceTimersByTimeAsync(250);
      const { resolved, value } = await settle(union.consume('k'));
      expect(resolved).toBe(false);
      expect(value).toEqual({ second: { remainingPoints: 0, msBeforeNext: 750, consumedPoints: 2, isFirstInDuration: false } });
      expect((await second.get('k'))?.consumedPoints).toBe(1);
      expect((await minute.get('k'))?.consumedPoints).toBe(1);
    });

    it('reports a refused missing key with the window it would have started, writing nothing', async () => {
      const { second, minute } = pair();
      const { value } = await settle(new RateLimiterUnion(second, minute, { allOrNothing: true }).consume('new', 3));
      expect(value).toEqual({
        second: { remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 3, isFirstInDuration: true },
        minute: { remainingPoints: 0, msBeforeNext: 60000, consumedPoints: 3, isFirstInDuration: true },
      });
      expect(await second.get('new')).toBeNull();
      expect(await minute.get('new')).toBeNull();
    });

    it('counts a limiter passed twice with both its points', async () => {
      const minute = new RateLimiterMemory({ keyPrefix: 'minute', points: 3, duration: 60 });
      const union = new RateLimiterUnion(minute, minute, { allOrNothing: true });
      expect((await settle(union.consume('k'))).resolved).toBe(true);
      expect((await settle(union.consume('k'))).resolved).toBe(false);
      expect((await minute.get('k'))?.consumedPoints).toBe(2);
    });

    it('never admits more than each limiter points per window, and never charges on a refusal (property)', async () => {
      const limiterSpec = fc.record({ points: fc.integer({ min: 1, max: 6 }), duration: fc.integer({ min: 1, max: 5 }) });
      const step = fc.record({ key: fc.constantFrom('a', 'b'), points: fc.integer({ min: 1, max: 4 }), advanceMs: fc.integer({ min: 0, max: 1500 }) });
      await fc.assert(
        fc.asyncProperty(fc.array(limiterSpec, { minLength: 1, maxLength: 3 }), fc.array(step, { maxLength: 40 }), async (specs, steps) => {
          jest.setSystemTime(T0);
          const limiters = specs.map((spec, i) => new RateLimiterMemory({ keyPrefix: `l${i}`, ...spec }));
          const union = new RateLimiterUnion(...limiters, { allOrNothing: true });
          for (const { key, points, advanceMs } of steps) {
            await jest.advanceTimersByTimeAsync(advanceMs);
            const before = await Promise.all(limiters.map(async (l) => (await l.get(key))?.consumedPoints ?? 0));
            const fits = limiters.every((l, i) => (before[i] as number) + points <= l.points);
            const { resolved } = await settle(union.consume(key, points));
            const after = await Promise.all(limiters.map(async (l) => (await l.get(key))?.consumedPoints ?? 0));
            expect(resolved).toBe(fits);
            expect(after).toEqual(before.map((count) => (fits ? count + points : count)));
            limiters.forEach((l, i) => expect(after[i]).toBeLessThanOrEqual(l.points));
          }
        }),
        { numRuns: 100 },
      );
    });

    it('puts a malformed store answer under every limiter prefix as an Error', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute, { allOrNothing: true });
      jest.spyOn(second as unknown as { _consumeAllOrNothing: () => Promise<AllOrNothingAnswer> }, '_consumeAllOrNothing').mockResolvedValue({ admitted: true, outcomes: [] });
      const { resolved, value } = await settle(union.consume('k'));
      expect(resolved).toBe(false);
      expect(value).toEqual({ second: expect.stringMatching(/answered 0 outcomes for 2 keys/), minute: expect.stringMatching(/answered 0 outcomes/) });
    });

    it('puts a store failure under every limiter prefix, charging nothing', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute, { allOrNothing: true });
      jest.spyOn(second as unknown as { _consumeAllOrNothing: () => Promise<never> }, '_consumeAllOrNothing').mockRejectedValue(new Error('store down'));
      expect(await settle(union.consume('k'))).toEqual({ resolved: false, value: { second: 'Error: store down', minute: 'Error: store down' } });
    });

    it('falls back to the insurance limiters, all or nothing, when every limiter has one on a common store', async () => {
      const [insuranceA, insuranceB] = [new RateLimiterMemory({ keyPrefix: 'ia', points: 1, duration: 1 }), new RateLimiterMemory({ keyPrefix: 'ib', points: 5, duration: 1 })];
      const union = new RateLimiterUnion(new DeadStoreLimiter('a', 1, 1, insuranceA), new DeadStoreLimiter('b', 5, 1, insuranceB), { allOrNothing: true });
      expect(await settle(union.consume('k'))).toEqual({
        resolved: true,
        value: {
          a: { remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true },
          b: { remainingPoints: 4, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true },
        },
      });
      expect((await settle(union.consume('k'))).resolved).toBe(false);
      expect((await insuranceB.get('k'))?.consumedPoints).toBe(1); // the insurance union charged nothing on its refusal either
    });

    it('keeps the store Error when a limiter has no insurance limiter', async () => {
      const insurance = new RateLimiterMemory({ keyPrefix: 'ia', points: 1, duration: 1 });
      const union = new RateLimiterUnion(new DeadStoreLimiter('a', 1, 1, insurance), new DeadStoreLimiter('b', 5, 1), { allOrNothing: true });
      expect(await settle(union.consume('k'))).toEqual({ resolved: false, value: { a: 'Error: store down', b: 'Error: store down' } });
      expect(await insurance.get('k')).toBeNull();
    });

    describe('is refused when built', () => {
      it('over limiters of two stores, naming why', () => {
        const { second } = pair();
        expect(() => new RateLimiterUnion(second, new OtherStoreLimiter(), { allOrNothing: true })).toThrow(RateKitOptionError);
        expect(() => new RateLimiterUnion(second, new OtherStoreLimiter(), { allOrNothing: true })).toThrow(/limiters\[1\].*same store/);
      });

      it('over a limiter that cannot take part in one atomic call', () => {
        const { second } = pair();
        const wrapped = new RLWrapperBlackAndWhite({ limiter: new RateLimiterMemory({ points: 1, duration: 1 }) });
        expect(() => new RateLimiterUnion(second, wrapped, { allOrNothing: true })).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'limiters[1]' }));
      });

      it('over a limiter with blockDuration or execEvenly', () => {
        const { second } = pair();
        expect(() => new RateLimiterUnion(second, new RateLimiterMemory({ points: 1, duration: 1, blockDuration: 10 }), { allOrNothing: true })).toThrow(/blockDuration/);
        expect(() => new RateLimiterUnion(second, new RateLimiterMemory({ points: 1, duration: 1, execEvenly: true }), { allOrNothing: true })).toThrow(/execEvenly/);
      });

      it('with a bad options object', () => {
        const { second } = pair();
        expect(() => new RateLimiterUnion(second, { allOrNothing: 'yes' } as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'options.allOrNothing' }));
        expect(() => new RateLimiterUnion(second, { allOrNothing: true, atomic: true } as never)).toThrow(expect.objectContaining({ option: 'options.atomic' }));
      });
    });

    it('refuses, charging nothing, a limiter given blockDuration after the union was built', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute, { allOrNothing: true });
      minute.blockDuration = 10;
      const { value } = await settle(union.consume('k'));
      expect(value.minute).toMatch(/blockDuration/);
      expect(await second.get('k')).toBeNull();
    });
  });

  describe('construction (rlf messages)', () => {
    it('needs at least one limiter', () => {
      expect(() => new RateLimiterUnion()).toThrow(new Error('RateLimiterUnion: at least one limiter have to be passed'));
      expect(new RateLimiterUnion(pair().second)).toBeInstanceOf(RateLimiterUnion);
    });

    it('needs compatible limiters, and takes an empty object for a limiter as rlf does', () => {
      const message = 'RateLimiterUnion: all limiters have to be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract';
      expect(() => new RateLimiterUnion(pair().second, {})).toThrow(new Error(message));
    });
  });

  describe('isRateLimiterUnionRejection (rlf #279)', () => {
    it('tells a union rejection from a RateLimiterRes and an Error', async () => {
      const { second, minute } = pair();
      const union = new RateLimiterUnion(second, minute);
      await union.consume('k');
      const rejection: unknown = await union.consume('k').catch((r: unknown) => r);
      expect(isRateLimiterUnionRejection(rejection)).toBe(true);
      expect(isRateLimiterUnionRejection({ second: new Error('store down') })).toBe(true);
      expect(isRateLimiterUnionRejection(new RateLimiterRes())).toBe(false);
      expect(isRateLimiterUnionRejection(new Error('x'))).toBe(false);
      expect(isRateLimiterUnionRejection({ second: 1 })).toBe(false);
      expect(isRateLimiterUnionRejection(null)).toBe(false);
    });
  });
});
