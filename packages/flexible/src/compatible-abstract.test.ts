import { RateLimiterCompatibleAbstract, isRateLimiterCompatible } from './compatible-abstract.js';
import { RateLimiterMemory } from './memory.js';

describe('isRateLimiterCompatible', () => {
  it('accepts instances of RateLimiterAbstract and RateLimiterCompatibleAbstract (rlf)', () => {
    expect(isRateLimiterCompatible(new RateLimiterMemory({ points: 1, duration: 1 }))).toBe(true);
    expect(isRateLimiterCompatible(new (class extends RateLimiterCompatibleAbstract {})())).toBe(true);
  });

  it('accepts, as a deliberate widening, a limiter of another copy: the seven methods and a string keyPrefix', () => {
    const method = (): Promise<null> => Promise.resolve(null);
    const foreign = { keyPrefix: 'x', consume: method, penalty: method, reward: method, get: method, set: method, block: method, delete: method };
    expect(isRateLimiterCompatible(foreign)).toBe(true);
    expect(isRateLimiterCompatible({ ...foreign, keyPrefix: undefined })).toBe(false);
    expect(isRateLimiterCompatible({ ...foreign, delete: undefined })).toBe(false);
  });

  it.each([[null], [undefined], [{}], ['limiter'], [() => undefined]])('refuses %p', (value) => {
    expect(isRateLimiterCompatible(value)).toBe(false);
  });
});

describe('RateLimiterCompatibleAbstract', () => {
  it("throws rlf's message from every member a subclass has not implemented", () => {
    const limiter = new RateLimiterCompatibleAbstract();
    expect(() => limiter.keyPrefix).toThrow("You have to implement the getter 'keyPrefix'!");
    expect(() => (limiter.execEvenly = true)).toThrow("You have to implement the setter 'execEvenly'!");
    expect(() => limiter.block('k', 1)).toThrow("You have to implement the method 'block'!");
  });
});
