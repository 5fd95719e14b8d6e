import { RateLimiterAbstract } from './abstract.js';
import type { IRateLimiterOptions } from './options.js';

const make = (opts: Partial<IRateLimiterOptions>): RateLimiterAbstract => new RateLimiterAbstract(opts as IRateLimiterOptions);

describe('RateLimiterAbstract: options and their validation (rlf 11.4, messages verbatim)', () => {
  it.each([
    [{ duration: 1 }, 'points must be set and must be a finite number'],
    [{ points: Infinity, duration: 1 }, 'points must be set and must be a finite number'],
    [{ points: '5' as unknown as number, duration: 1 }, 'points must be set and must be a finite number'],
    [{ points: 5 }, 'duration must be set and must be a finite, non-negative number'],
    [{ points: 5, duration: -1 }, 'duration must be set and must be a finite, non-negative number'],
    [{ points: 5, duration: '1' as unknown as number }, 'duration must be set and must be a finite, non-negative number'],
    [{ points: 5, duration: 1, keyPrefix: 1 as unknown as string }, 'keyPrefix must be string'],
  ])('refuses %j with a plain Error: %s', (opts, message) => {
    expect(() => make(opts)).toThrow(new Error(message));
  });

  it('accepts 0 and negative points, and duration 0 (never expires)', () => {
    expect(make({ points: -2, duration: 0 }).points).toBe(-2);
  });

  it("defaults: keyPrefix 'rlflx', blockDuration 0, execEvenly false", () => {
    const limiter = make({ points: 5, duration: 2 });
    expect([limiter.keyPrefix, limiter.blockDuration, limiter.execEvenly]).toEqual(['rlflx', 0, false]);
    expect([limiter.msDuration, limiter.msBlockDuration]).toEqual([2000, 0]);
  });

  it('execEvenlyMinDelayMs follows points and duration until set (rlf 11.4): ceil(duration*1000/points), 0 when points ≤ 0', () => {
    const limiter = make({ points: 3, duration: 1 });
    expect(limiter.execEvenlyMinDelayMs).toBe(334);
    limiter.points = 10;
    expect(limiter.execEvenlyMinDelayMs).toBe(100);
    limiter.points = 0;
    expect(limiter.execEvenlyMinDelayMs).toBe(0);
    limiter.execEvenlyMinDelayMs = 7;
    expect(limiter.execEvenlyMinDelayMs).toBe(7);
  });

  it('checks options assigned at runtime too', () => {
    const limiter = make({ points: 5, duration: 1 });
    expect(() => (limiter.points = NaN)).toThrow('points must be set and must be a finite number');
    limiter.execEvenly = 'yes' as unknown as boolean;
    expect(limiter.execEvenly).toBe(true);
  });

  it.each([
    ['rlflx', 'ip', 'rlflx:ip', 'ip'],
    ['', 'ip', 'ip', 'ip'],
    ['a:b', 42, 'a:b:42', '42'],
  ])('keyPrefix %j: getKey(%j) is %j and parseKey gives back %j', (keyPrefix, key, rlKey, parsed) => {
    const limiter = make({ points: 1, duration: 1, keyPrefix });
    expect(limiter.getKey(key)).toBe(rlKey);
    expect(limiter.parseKey(rlKey)).toBe(parsed);
  });

  it.each([
    [{ customDuration: 5 }, 5],
    [{ customDuration: 0 }, 0],
    [{ customDuration: -1 }, 60],
    [{}, 60],
  ])('a call with options %j runs for %d seconds', (options, seconds) => {
    expect(make({ points: 1, duration: 60 })._getKeySecDuration(options)).toBe(seconds);
  });

  it("throws rlf's message from each operation a subclass has not implemented", () => {
    const limiter = make({ points: 1, duration: 1 });
    expect(() => limiter.consume('k')).toThrow("You have to implement the method 'consume'!");
    expect(() => limiter.delete('k')).toThrow("You have to implement the method 'delete'!");
  });
});
