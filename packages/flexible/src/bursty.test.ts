import { BurstyRateLimiter } from './bursty.js';
import { RateLimiterCompatibleAbstract } from './compatible-abstract.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** A limiter whose consume fails like a dead store. */
class FailingLimiter extends RateLimiterCompatibleAbstract {
  consumed = 0;
  override get keyPrefix(): string {
    return 'failing';
  }
  override consume(): Promise<RateLimiterRes> {
    this.consumed += 1;
    return Promise.reject(new Error('store down'));
  }
}

describe('BurstyRateLimiter', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const make = () => {
    const steady = new RateLimiterMemory({ points: 1, duration: 1 });
    const burst = new RateLimiterMemory({ keyPrefix: 'burst', points: 1, duration: 10 });
    return { steady, burst, bursty: new BurstyRateLimiter(steady, burst) };
  };

  describe('while the steady limiter admits', () => {
    it('answers the steady limiter and leaves the burst limiter untouched', async () => {
      const { burst, bursty } = make();
      const res = await bursty.consume('k');
      expect(res).toBeInstanceOf(RateLimiterRes);
      expect(res.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true });
      expect(await burst.get('k')).toBeNull();
    });
  });

  describe('once the steady limiter refuses', () => {
    it('admits from the burst limiter, answering the steady points and the smaller msBeforeNext', async () => {
      const { burst, bursty } = make();
      await bursty.consume('k');
      jest.advanceTimersByTime(200);
      const res = await bursty.consume('k');
      expect(res.consumedPoints).toBe(2);
      expect(res.remainingPoints).toBe(0);
      expect(res.isFirstInDuration).toBe(false);
      expect(res.msBeforeNext).toBe(800); // the steady window's 800 ms, not the burst window's 10 s
      expect((await burst.get('k'))?.consumedPoints).toBe(1);
    });

    it('rejects with a RateLimiterRes when both refuse', async () => {
      const { bursty } = make();
      await bursty.consume('k');
      await bursty.consume('k');
      const rejection: unknown = await bursty.consume('k').catch((r: unknown) => r);
      expect(rejection).toBeInstanceOf(RateLimiterRes);
      expect((rejection as RateLimiterRes).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 3, isFirstInDuration: false });
    });
  });

  describe('store failures', () => {
    it('rejects with the steady limiter Error and never charges the burst limiter', async () => {
      const burst = new RateLimiterMemory({ keyPrefix: 'burst', points: 1, duration: 10 });
      const bursty = new BurstyRateLimiter(new FailingLimiter(), burst);
      await expect(bursty.consume('k')).rejects.toThrow('store down');
      expect(await burst.get('k')).toBeNull();
    });

    it('rejects with the burst limiter Error when only it fails', async () => {
      const steady = new RateLimiterMemory({ points: 1, duration: 1 });
      const failing = new FailingLimiter();
      const bursty = new BurstyRateLimiter(steady, failing);
      await bursty.consume('k');
      await expect(bursty.consume('k')).rejects.toThrow('store down');
      expect(failing.consumed).toBe(1);
    });
  });

  describe('get', () => {
    it('is null when the steady limiter has no record', async () => {
      expect(await make().bursty.get('nobody')).toBeNull();
    });

    it('answers msBeforeNext 0 when only the steady limiter has a record', async () => {
      const { steady, bursty } = make();
      await steady.consume('k');
      expect((await bursty.get('k'))?.msBeforeNext).toBe(0);
    });

    it('combines both records as consume does', async () => {
      const { bursty } = make();
      await bursty.consume('k');
      await bursty.consume('k');
      expect((await bursty.get('k'))?.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 1000, consumedPoints: 2, isFirstInDuration: false });
    });
  });

  it('exposes the steady limiter points', () => {
    expect(make().bursty.points).toBe(1);
  });
});
