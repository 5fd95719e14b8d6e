import { RateKitError } from '@ratekit/core';
import { keyError } from './key-error.js';

describe('keyError', () => {
  it('wraps what a keyGenerator threw, as the cause', () => {
    const thrown = new Error('no session');
    const error = keyError({ threw: thrown });
    expect(error).toBeInstanceOf(RateKitError);
    expect(error.code).toBe('ERR_RATEKIT_KEY');
    expect(error.message).toBe('[ratekit] The keyGenerator failed: no session');
    expect(error.cause).toBe(thrown);
    expect(keyError({ threw: 'plain' }).message).toBe('[ratekit] The keyGenerator failed: plain');
  });

  it.each<[unknown, string]>([
    ['', '""'],
    [undefined, 'undefined'],
    [null, 'null'],
    [42, '42'],
    [['a'], 'an array'],
    [{ id: 1 }, 'an object'],
  ])('describes the unusable key %p', (returned, described) => {
    const error = keyError({ returned });
    expect(error.code).toBe('ERR_RATEKIT_KEY');
    expect(error.message).toBe(`[ratekit] Expected the keyGenerator to return a non-empty string, got ${described}`);
  });
});
