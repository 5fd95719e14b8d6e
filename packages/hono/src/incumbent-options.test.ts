import { RateKitOptionError } from '@ratekit/core';
import { rateLimit } from './rate-limit.js';

const keyGenerator = () => 'k';

describe("hono-rate-limiter's options in ratekit mode", () => {
  it('accepts the refund options as hono-rate-limiter types them', () => {
    expect(() => rateLimit({ keyGenerator, skipFailedRequests: true, skipSuccessfulRequests: false, requestWasSuccessful: () => true })).not.toThrow();
  });

  it.each([
    [{ skipFailedRequests: 'yes' }, 'skipFailedRequests', 'a boolean'],
    [{ skipSuccessfulRequests: 'yes' }, 'skipSuccessfulRequests', 'a boolean'],
    [{ requestWasSuccessful: true }, 'requestWasSuccessful', 'a function'],
    [{ requestPropertyName: '' }, 'requestPropertyName', 'a non-empty string'],
  ])('refuses %j when the middleware is built, naming `%s`', (options, option, expected) => {
    expect(() => rateLimit({ keyGenerator, ...(options as object) })).toThrow(expect.objectContaining({ constructor: RateKitOptionError, option, expected }));
  });
});
