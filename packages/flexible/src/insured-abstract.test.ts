import { RateLimiterInsuredAbstract } from './insured-abstract.js';
import { RateLimiterMemory } from './memory.js';
import type { IRateLimiterOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** A limiter whose hooks fail as told: 'error' (a store failure) or 'refuse' (a RateLimiterRes). */
class Flaky extends RateLimiterInsuredAbstract {
  mode: 'error' | 'refuse' | 'ok' = 'error';

  constructor(opts: IRateLimiterOptions) {
    super(opts);
  }

  #answer(): Promise<RateLimiterRes> {
    if (this.mode === 'error') return Promise.reject(new Error('store down'));
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a refusal, as rlf rejects
    if (this.mode === 'refuse') return Promise.reject(new RateLimiterRes(0, 1000, 2));
    return Promise.resolve(new RateLimiterRes(4, 1000, 1));
  }

  override _consume(): Promise<RateLimiterRes> {
    return this.#answer();
  }

  override _get(): Promise<RateLimiterRes> {
    return this.#answer();
  }
}

describe('RateLimiterInsuredAbstract: the insuranceLimiter fallback', () => {
  it('answers a store failure with the insurance limiter, making the same call', async () => {
    const insurance = new RateLimiterMemory({ points: 1, duration: 10 });
    const limiter = new Flaky({ points: 5, duration: 1, insuranceLimiter: insurance });
    expect((await limiter.consume('k', 1)).consumedPoints).toBe(1);
    await expect(limiter.consume('k', 1)).rejects.toBeInstanceOf(RateLimiterRes); // the insurance limiter's own refusal
    expect((await limiter.get('k'))?.consumedPoints).toBe(2);
  });

  it('never sends a refusal to the insurance limiter', async () => {
    const insurance = new RateLimiterMemory({ points: 9, duration: 10 });
    const limiter = new Flaky({ points: 5, duration: 1, insuranceLimiter: insurance });
    limiter.mode = 'refuse';
    await expect(limiter.consume('k')).rejects.toEqual(new RateLimiterRes(0, 1000, 2));
    expect(await insurance.get('k')).toBeNull();
  });

  it('rejects with the Error when no insurance limiter is set', async () => {
    await expect(new Flaky({ points: 5, duration: 1 }).consume('k')).rejects.toThrow('store down');
  });

  it("gives the insurance limiter this limiter's blockDuration and execEvenly (rlf)", () => {
    const insurance = new RateLimiterMemory({ points: 9, duration: 10, blockDuration: 99 });
    new Flaky({ points: 5, duration: 1, blockDuration: 7, execEvenly: true, insuranceLimiter: insurance });
    expect([insurance.blockDuration, insurance.execEvenly]).toEqual([7, true]);
  });

  it("refuses an insurance limiter that is not a limiter, with rlf's message", () => {
    expect(() => new Flaky({ points: 5, duration: 1, insuranceLimiter: {} as RateLimiterMemory })).toThrow('insuranceLimiter must be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
  });

  it("throws rlf's message synchronously for a hook a subclass has not implemented", () => {
    expect(() => new Flaky({ points: 1, duration: 1 }).delete('k')).toThrow("You have to implement the method '_delete'!");
  });
});
