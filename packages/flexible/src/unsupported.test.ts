import { RateKitError } from '@ratekit/core';
import * as rlf from 'rate-limiter-flexible';
import * as flexible from './index.js';
import { RateKitFlexibleUnsupportedStoreError } from './unsupported.js';

const OUT_OF_SCOPE = [
  'RateLimiterMongo',
  'RateLimiterMySQL',
  'RateLimiterDynamo',
  'RateLimiterPrisma',
  'RateLimiterValkeyGlide',
  'RateLimiterSQLite',
  'RateLimiterEtcd',
  'RateLimiterEtcdNonAtomic',
  'RateLimiterDrizzle',
  'RateLimiterDrizzleNonAtomic',
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

describe("rlf's component errors", () => {
  // rlf's lib/component/RateLimiterSetupError is not in its root index: a deep path only.
  const RlfSetupError = require('rate-limiter-flexible/lib/component/RateLimiterSetupError') as new (message?: string) => Error;

  it.each([
    ['RateLimiterEtcdTransactionFailedError', flexible.RateLimiterEtcdTransactionFailedError, rlf.RateLimiterEtcdTransactionFailedError as unknown as new (message?: string) => Error],
    ['RateLimiterSetupError', flexible.RateLimiterSetupError, RlfSetupError],
  ])("%s has rlf's own keys, so JSON.stringify gives the same text", (_name, Ours, Theirs) => {
    for (const message of ['the store is not set', undefined]) {
      expect(JSON.stringify(new Ours(message))).toBe(JSON.stringify(new Theirs(message)));
      expect(Object.keys(new Ours(message))).toEqual(Object.keys(new Theirs(message)));
    }
    expect(new Ours('x')).toBeInstanceOf(Error);
  });
});
