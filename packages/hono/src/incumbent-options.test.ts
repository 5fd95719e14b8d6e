import { RateKitOptionError } from '@ratekit/core';
import { assertRefundOptions, requestPropertyNameOf } from './incumbent-options.js';

describe("hono-rate-limiter's options in ratekit mode", () => {
  it('accepts the refund options as hono-rate-limiter types them', () => {
    expect(() => assertRefundOptions({ skipFailedRequests: true, skipSuccessfulRequests: false, requestWasSuccessful: () => true })).not.toThrow();
  });

  it.each(['skipFailedRequests', 'skipSuccessfulRequests'] as const)('refuses a %s that is not a boolean, naming it', (name) => {
    expect(() => assertRefundOptions({ [name]: 'yes' })).toThrow(RateKitOptionError);
    expect(() => assertRefundOptions({ [name]: 'yes' })).toThrow(`\`${name}\` to be a boolean`);
  });

  it('refuses a requestWasSuccessful that is not a function', () => {
    expect(() => assertRefundOptions({ requestWasSuccessful: true } as never)).toThrow('`requestWasSuccessful`');
  });

  it("puts the decision in 'rateLimit' unless requestPropertyName names another non-empty variable", () => {
    expect(requestPropertyNameOf({})).toBe('rateLimit');
    expect(requestPropertyNameOf({ requestPropertyName: 'limit' })).toBe('limit');
    expect(() => requestPropertyNameOf({ requestPropertyName: '' })).toThrow('`requestPropertyName` to be a non-empty string');
  });
});
