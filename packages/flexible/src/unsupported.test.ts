import { RateKitError } from '@ratekit/core';
import * as flexible from './index.js';
import { RateKitFlexibleUnsupportedStoreError } from './unsupported.js';

const OUT_OF_SCOPE = [
  'RateLimiterMongo',
  'RateLimiterMySQL',
  'RateLimiterDynamo',
  'RateLimiterPrisma',
  'RateLimiterValkey',
  'RateLimiterValkeyGlide',
  'RateLimiterSQLite',
  'RateLimiterEtcd',
  'RateLimiterEtcdNonAtomic',
  'RateLimiterDrizzle',
  'RateLimiterDrizzleNonAtomic',
  'RateLimiterRedisNonAtomic',
] as const;

describe('the rlf stores @ratekit/flexible does not implement', () => {
  it.each(OUT_OF_SCOPE)('%s is exported under its name and throws a coded error naming it and the guide', (name) => {
    const Store = flexible[name] as unknown as new (opts: unknown) => unknown;
    let thrown: unknown;
    try {
      new Store({ storeClient: {}, points: 1, duration: 1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RateKitFlexibleUnsupportedStoreError);
    expect(thrown).toBeInstanceOf(RateKitError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_FLEXIBLE_UNSUPPORTED_STORE', store: name });
    expect((thrown as Error).message).toContain(`${name} is not supported`);
    expect((thrown as Error).message).toContain('docs/migrating/rate-limiter-flexible.md');
  });

  it('RateLimiterEtcdTransactionFailedError is a plain Error class under its name', () => {
    const error = new flexible.RateLimiterEtcdTransactionFailedError('conflict');
    expect([error instanceof Error, error.name, error.message]).toEqual([true, 'RateLimiterEtcdTransactionFailedError', 'conflict']);
  });
});
