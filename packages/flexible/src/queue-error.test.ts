import { RateLimiterQueueError } from './queue-error.js';

describe('RateLimiterQueueError', () => {
  it('is an Error named CustomError, as in rate-limiter-flexible', () => {
    const err = new RateLimiterQueueError("Number of requests reached it's maximum 1");
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(RateLimiterQueueError);
    expect(err.name).toBe('CustomError');
    expect(err.message).toBe("Number of requests reached it's maximum 1");
  });

  it('serializes its name, message and extra to JSON, as rlf assigns them', () => {
    expect(JSON.parse(JSON.stringify(new RateLimiterQueueError('test', 'extra')))).toEqual({ name: 'CustomError', message: 'test', extra: 'extra' });
  });

  it('keeps a truthy extra argument', () => {
    expect(new RateLimiterQueueError('test', 'extra').extra).toBe('extra');
  });

  it('has no extra field when the extra argument is missing or empty', () => {
    expect(Object.prototype.hasOwnProperty.call(new RateLimiterQueueError('test'), 'extra')).toBe(false);
    expect(Object.prototype.hasOwnProperty.call(new RateLimiterQueueError('test', ''), 'extra')).toBe(false);
  });
});
