import { RateKitOptionError } from '../errors.js';
import { resolveRefundOptions } from './refund-options.js';

describe("resolveRefundOptions: express-rate-limit's response options, checked once for every adapter", () => {
  it("takes express-rate-limit's defaults: the decision on `rateLimit`, no refunds", () => {
    expect(resolveRefundOptions({})).toEqual({ requestPropertyName: 'rateLimit', skipFailedRequests: false, skipSuccessfulRequests: false, requestWasSuccessful: undefined });
  });

  it('keeps what is given', () => {
    const requestWasSuccessful = () => true;
    expect(resolveRefundOptions({ requestPropertyName: 'limit', skipFailedRequests: true, skipSuccessfulRequests: true, requestWasSuccessful })).toEqual({
      requestPropertyName: 'limit',
      skipFailedRequests: true,
      skipSuccessfulRequests: true,
      requestWasSuccessful,
    });
  });

  it.each([
    [{ requestPropertyName: '' }, 'requestPropertyName', 'a non-empty string'],
    [{ requestPropertyName: 5 }, 'requestPropertyName', 'a non-empty string'],
    [{ skipFailedRequests: 'yes' }, 'skipFailedRequests', 'a boolean'],
    [{ skipSuccessfulRequests: 1 }, 'skipSuccessfulRequests', 'a boolean'],
    [{ requestWasSuccessful: true }, 'requestWasSuccessful', 'a function'],
  ])('%j throws a RateKitOptionError naming `%s`', (options, option, expected) => {
    expect(() => resolveRefundOptions(options as never)).toThrow(expect.objectContaining({ constructor: RateKitOptionError, option, expected: expect.stringContaining(expected) }));
  });
});
