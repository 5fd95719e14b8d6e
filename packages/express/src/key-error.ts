/**
 * The error both modes pass to `next(err)` when a custom `keyGenerator`
 * throws, rejects or returns no usable key (code `ERR_RATEKIT_KEY`).
 *
 * @module
 */
import { RateKitError } from '@ratekit/core';

/** The error for a custom `keyGenerator` that threw, rejected or returned no usable key (code `ERR_RATEKIT_KEY`). */
export function keyError(problem: { threw: unknown } | { returned: unknown }, expected = 'a non-empty string'): RateKitError {
  if ('threw' in problem) {
    const reason = problem.threw instanceof Error ? problem.threw.message : String(problem.threw);
    return new RateKitError('ERR_RATEKIT_KEY', `The keyGenerator failed: ${reason}`, { cause: problem.threw });
  }
  return new RateKitError('ERR_RATEKIT_KEY', `Expected the keyGenerator to return ${expected}, got ${describe(problem.returned)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
