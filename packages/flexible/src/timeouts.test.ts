import { RateLimiterAbstract } from './abstract.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RLWrapperTimeouts } from './timeouts.js';

/** A limiter whose calls answer only when the test says so. */
function slowLimiter() {
  const limiter = new RateLimiterAbstract({ points: 4, duration: 1 });
  const answers: Array<() => void> = [];
  const later = <T>(value: T) =>
    jest.fn(
      () =>
        new Promise<T>((resolve) => {
          answers.push(() => resolve(value));
        }),
    );
  limiter.consume = later(new RateLimiterRes(3, 1000, 1, true));
  limiter.get = later(null);
  limiter.delete = later(true);
  return { limiter, answerAll: () => answers.splice(0).forEach((answer) => answer()) };
}

describe('RLWrapperTimeouts', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe('a call answered in time', () => {
    it('answers what the wrapped limiter answered, with the same arguments', async () => {
      const { limiter, answerAll } = slowLimiter();
      const wrapper = new RLWrapperTimeouts({ limiter, timeoutMs: 500 });
      const call = wrapper.consume('k', 2, { customDuration: 3 });
      jest.advanceTimersByTime(499);
      answerAll();
      expect((await call).toJSON()).toEqual({ remainingPoints: 3, msBeforeNext: 1000, consumedPoints: 1, isFirstInDuration: true });
      expect(limiter.consume).toHaveBeenCalledWith('k', 2, { customDuration: 3 });
    });

    it('passes refusals through as they are, never to the insurance limiter', async () => {
      const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
      const insuranceLimiter = new RateLimiterMemory({ keyPrefix: 'insurance', points: 100, duration: 1 });
      const wrapper = new RLWrapperTimeouts({ limiter, insuranceLimiter, timeoutMs: 500 });
      await wrapper.consume('k');
      await expect(wrapper.consume('k')).rejects.toBeInstanceOf(RateLimiterRes);
      expect(await insuranceLimiter.get('k')).toBeNull();
    });
  });

  describe('a call not answered in time', () => {
    it.each(['consume', 'get', 'delete'] as const)('%s rejects with Error("Operation timed out") after timeoutMs', async (method) => {
      const { limiter, answerAll } = slowLimiter();
      const wrapper = new RLWrapperTimeouts({ limiter, timeoutMs: 500 });
      const call = (wrapper[method] as (key: string) => Promise<unknown>)('k');
      const outcome = call.then(
        () => 'answered',
        (err: Error) => err,
      );
      jest.advanceTimersByTime(500);
      const err = await outcome;
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toBe('Operation timed out');
      answerAll(); // the late answer is dropped
    });

    it('is answered by the insurance limiter when one is set', async () => {
      const { limiter } = slowLimiter();
      const insuranceLimiter = new RateLimiterMemory({ keyPrefix: 'insurance', points: 5, duration: 1 });
      const wrapper = new RLWrapperTimeouts({ limiter, insuranceLimiter, timeoutMs: 500 });
      const call = wrapper.consume('k');
      jest.advanceTimersByTime(500);
      expect((await call).consumedPoints).toBe(1);
      expect((await insuranceLimiter.get('k'))?.consumedPoints).toBe(1);
    });

    it("takes the wrapped limiter's insurance limiter when it has none of its own", async () => {
      const insuranceLimiter = new RateLimiterMemory({ keyPrefix: 'insurance', points: 5, duration: 1 });
      const memory = new RateLimiterMemory({ points: 5, duration: 1 });
      const limiter = new RLWrapperTimeouts({ limiter: memory, insuranceLimiter, timeoutMs: 100 }); // an insured limiter
      const wrapper = new RLWrapperTimeouts({ limiter });
      expect(wrapper.insuranceLimiter).toBe(insuranceLimiter);
    });
  });

  describe('options (rlf messages)', () => {
    it('requires a compatible limiter', () => {
      expect(() => new RLWrapperTimeouts({ limiter: {} as never })).toThrow(new TypeError('limiter must be an instance of RateLimiterAbstract or RateLimiterCompatibleAbstract'));
    });

    it('requires a non-negative timeoutMs, defaulting to 0', () => {
      const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
      expect(() => new RLWrapperTimeouts({ limiter, timeoutMs: -1 })).toThrow(new TypeError('timeoutMs must be a non-negative number'));
      expect(new RLWrapperTimeouts({ limiter }).timeoutMs).toBe(0);
    });
  });
});
