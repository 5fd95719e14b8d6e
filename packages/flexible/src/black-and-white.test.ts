import { RLWrapperBlackAndWhite } from './black-and-white.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterRes } from './rate-limiter-res.js';

const WHITE = { remainingPoints: Number.MAX_SAFE_INTEGER, msBeforeNext: 0, consumedPoints: 0, isFirstInDuration: false };
const BLACK = { remainingPoints: 0, msBeforeNext: Number.MAX_SAFE_INTEGER, consumedPoints: 0, isFirstInDuration: false };

describe('RLWrapperBlackAndWhite', () => {
  const wrap = (opts: Partial<ConstructorParameters<typeof RLWrapperBlackAndWhite>[0]> = {}) => {
    const limiter = new RateLimiterMemory({ keyPrefix: 'bw', points: 1, duration: 10 });
    return { limiter, wrapped: new RLWrapperBlackAndWhite({ limiter, ...opts }) };
  };

  describe('a key on neither list', () => {
    it('goes to the wrapped limiter', async () => {
      const { limiter, wrapped } = wrap({ blackList: ['bad'], whiteList: ['good'] });
      expect((await wrapped.consume('other')).consumedPoints).toBe(1);
      await expect(wrapped.consume('other')).rejects.toBeInstanceOf(RateLimiterRes);
      expect((await limiter.get('other'))?.consumedPoints).toBe(2);
    });

    it('forwards every argument, options included', async () => {
      const { limiter, wrapped } = wrap();
      const spy = jest.spyOn(limiter, 'set');
      await wrapped.set('k', 1, 30, { custom: 1 });
      expect(spy).toHaveBeenCalledWith('k', 1, 30, { custom: 1 });
    });
  });

  describe('a white-listed key', () => {
    it.each(['list', 'predicate'])('resolves every call with unlimited points, charging nothing (%s)', async (how) => {
      const { limiter, wrapped } = wrap(how === 'list' ? { whiteList: ['good'] } : { isWhiteListed: (key: string) => key === 'good' });
      for (const call of [wrapped.consume('good', 5), wrapped.penalty('good'), wrapped.reward('good'), wrapped.block('good', 10), wrapped.set('good', 3, 10), wrapped.get('good')]) {
        expect((await call)?.toJSON()).toEqual(WHITE);
      }
      expect(await limiter.get('good')).toBeNull();
    });

    it('wins over the black list', async () => {
      const { wrapped } = wrap({ whiteList: ['both'], blackList: ['both'] });
      expect((await wrapped.consume('both')).toJSON()).toEqual(WHITE);
    });
  });

  describe('a black-listed key', () => {
    it('is refused on consume with a RateLimiterRes blocked for Number.MAX_SAFE_INTEGER ms', async () => {
      const { limiter, wrapped } = wrap({ blackList: ['bad'] });
      const rejection: unknown = await wrapped.consume('bad').catch((r: unknown) => r);
      expect(rejection).toBeInstanceOf(RateLimiterRes);
      expect((rejection as RateLimiterRes).toJSON()).toEqual(BLACK);
      expect(await limiter.get('bad')).toBeNull();
    });

    it('is answered as blocked by penalty, reward, block, set and get', async () => {
      const { wrapped } = wrap({ isBlackListed: (key: string) => key === 'bad' });
      for (const call of [wrapped.penalty('bad'), wrapped.reward('bad'), wrapped.block('bad', 10), wrapped.set('bad', 3, 10), wrapped.get('bad')]) {
        expect((await call)?.toJSON()).toEqual(BLACK);
      }
    });
  });

  describe('runActionAnyway', () => {
    it('still charges the wrapped limiter for a listed key, and get answers its record', async () => {
      const { wrapped } = wrap({ blackList: ['bad'], runActionAnyway: true });
      await expect(wrapped.consume('bad')).rejects.toBeInstanceOf(RateLimiterRes);
      await Promise.resolve();
      expect((await wrapped.get('bad'))?.consumedPoints).toBe(1);
    });

    it('drops the wrapped limiter errors', async () => {
      const { limiter, wrapped } = wrap({ whiteList: ['good'], runActionAnyway: true });
      jest.spyOn(limiter, 'consume').mockRejectedValue(new Error('store down'));
      expect((await wrapped.consume('good')).toJSON()).toEqual(WHITE);
    });
  });

  it('deletes on the wrapped limiter whatever the lists say', async () => {
    const { limiter, wrapped } = wrap({ blackList: ['k'], whiteList: ['k'] });
    await limiter.consume('k');
    expect(await wrapped.delete('k')).toBe(true);
    expect(await limiter.get('k')).toBeNull();
  });

  it('reads and writes keyPrefix, blockDuration and execEvenly through to the wrapped limiter', () => {
    const { limiter, wrapped } = wrap();
    expect(wrapped.keyPrefix).toBe('bw');
    wrapped.blockDuration = 7;
    wrapped.execEvenly = true;
    expect(limiter.blockDuration).toBe(7);
    expect(limiter.execEvenly).toBe(true);
  });

  describe('options (rlf messages)', () => {
    it('requires a limiter', () => {
      expect(() => new RLWrapperBlackAndWhite({} as never)).toThrow(new Error('limiter is not set'));
    });

    it('requires the predicates to be functions', () => {
      expect(() => wrap({ isBlackListed: 'yes' as never })).toThrow(new Error('isBlackListed must be function'));
      expect(() => wrap({ isWhiteListed: 1 as never })).toThrow(new Error('isWhiteListed must be function'));
    });

    it('treats a list that is not an array as empty', async () => {
      const { wrapped } = wrap({ blackList: 'bad' as never });
      expect(wrapped.blackList).toEqual([]);
      expect((await wrapped.consume('bad')).consumedPoints).toBe(1);
    });
  });
});
