import { inspect } from 'node:util';
import { RateLimiterRes } from './rate-limiter-res.js';

describe('RateLimiterRes', () => {
  it('takes (remainingPoints, msBeforeNext, consumedPoints, isFirstInDuration), defaulting to 0, 0, 0, false', () => {
    expect(new RateLimiterRes(3, 500, 2, true).toJSON()).toEqual({ remainingPoints: 3, msBeforeNext: 500, consumedPoints: 2, isFirstInDuration: true });
    expect(new RateLimiterRes().toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 0, consumedPoints: 0, isFirstInDuration: false });
  });

  it('casts isFirstInDuration with Boolean, as rlf does', () => {
    const res = new RateLimiterRes();
    res.isFirstInDuration = 1 as unknown as boolean;
    expect(res.isFirstInDuration).toBe(true);
  });

  it('stores its fields as _-prefixed accessors (what rlf users see) but shows the plain four', () => {
    const res = new RateLimiterRes(1, 2, 3, false);
    expect(res._msBeforeNext).toBe(2);
    expect(String(res)).toBe('{"remainingPoints":1,"msBeforeNext":2,"consumedPoints":3,"isFirstInDuration":false}');
    expect(JSON.stringify({ res })).toBe('{"res":{"remainingPoints":1,"msBeforeNext":2,"consumedPoints":3,"isFirstInDuration":false}}');
    expect(inspect(res, { breakLength: Infinity })).toBe('{ remainingPoints: 1, msBeforeNext: 2, consumedPoints: 3, isFirstInDuration: false }');
  });

  it('is a class a refusal can be told apart with (instanceof)', async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a refusal, as rlf rejects
    const refusal: unknown = await Promise.reject(new RateLimiterRes(0, 1000, 6)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RateLimiterRes);
    expect(refusal).not.toBeInstanceOf(Error);
  });

  it('keeps an explicit null, as rlf does (only a missing argument takes the default)', () => {
    const res = new RateLimiterRes(null as never, null as never, null as never, null as never);
    expect([res.remainingPoints, res.msBeforeNext, res.consumedPoints]).toEqual([null, null, null]);
    expect(res.isFirstInDuration).toBe(false);
    expect(new RateLimiterRes().toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 0, consumedPoints: 0, isFirstInDuration: false });
  });
});
