import { memoryStore, RateKitOptionError } from '@ratekit/core';
import { MemoryStore } from './compat/memory-store.js';
import { rateLimit } from './rate-limit.js';
import { selectsRateKit } from './ratekit-options.js';
import type { RateLimitOptions } from './types.js';

describe('selectsRateKit: the mode rule', () => {
  it.each([
    ['no options', {}, false],
    ['express-rate-limit options only', { windowMs: 1_000, limit: 2, standardHeaders: 'draft-8', max: 3, validate: false }, false],
    ['an express-rate-limit store', { store: new MemoryStore() }, false],
    ['a clock (neutral)', { now: () => 0 }, false],
    ['ratekit options set to undefined', { algorithm: undefined, prefix: undefined }, false],
    ['not an object', 'fast', false],
    ['algorithm', { algorithm: 'fixed-window' }, true],
    ['limits', { limits: { limit: 1, windowMs: 1_000 } }, true],
    ['cost', { cost: 1 }, true],
    ['prefix', { prefix: 'a' }, true],
    ['onStoreError', { onStoreError: 'allow' }, true],
    ['storeTimeoutMs', { storeTimeoutMs: 50 }, true],
    ['onError', { onError: () => undefined }, true],
    ['refusalCache', { refusalCache: false }, true],
    ['a ratekit store', { store: memoryStore() }, true],
  ] as const)('%s: %p', (_situation, options, ratekit) => {
    expect(selectsRateKit(options)).toBe(ratekit);
    if (typeof options === 'object') expect(rateLimit(options as RateLimitOptions).limiter === undefined).toBe(!ratekit);
  });
});

describe('ratekit mode options', () => {
  it('builds one limit from windowMs, limit and algorithm', () => {
    const { limiter } = rateLimit({ windowMs: 1_000, limit: 10, algorithm: 'gcra' });
    expect(limiter?.limitsFor()).toEqual([expect.objectContaining({ algorithm: 'gcra', limit: 10, windowMs: 1_000 })]);
  });

  it('takes several limits as given, and a shared ratekit store as given', () => {
    const store = memoryStore();
    const { limiter } = rateLimit({
      store,
      limits: [
        { limit: 10, windowMs: 1_000 },
        { limit: 100, windowMs: 60_000 },
      ],
    });
    expect(limiter?.limitsFor().map((l) => l.name)).toEqual(['10-in-1sec', '100-in-1min']);
    expect(limiter?.store).toBe(store);
    store.dispose();
  });

  // Each row: the options, and the option the error must name.
  const table: Array<[string, RateLimitOptions, string]> = [
    ['windowMs "1m"', { algorithm: 'fixed-window', windowMs: '1m' as never }, 'windowMs'],
    ['limit -1', { algorithm: 'fixed-window', limit: -1 }, 'limit'],
    ['limit NaN', { algorithm: 'fixed-window', limit: Number.NaN }, 'limit'],
    ['windowMs 0', { algorithm: 'fixed-window', windowMs: 0 }, 'windowMs'],
    ['limit 0', { algorithm: 'fixed-window', limit: 0 }, 'limit'],
    ['a limit function', { algorithm: 'gcra', limit: () => 5 }, 'limit'],
    ['an express-rate-limit store', { algorithm: 'gcra', store: new MemoryStore() }, 'store'],
    ['an unknown algorithm', { algorithm: 'leaky' as never }, 'algorithm'],
    ['windowMs beside limits', { limits: { limit: 1, windowMs: 1_000 }, windowMs: 1_000 }, 'windowMs'],
    ['limit beside limits', { limits: { limit: 1, windowMs: 1_000 }, limit: 2 }, 'limit'],
    ['algorithm beside limits', { limits: { limit: 1, windowMs: 1_000 }, algorithm: 'gcra' }, 'algorithm'],
    ['an empty limits array', { limits: [] }, 'limits'],
    ['a limit without windowMs', { limits: { limit: 1 } as never }, 'limits.windowMs'],
    ['a negative cost', { cost: -1 }, 'cost'],
    ['a prefix with NUL', { prefix: 'a\u0000b' }, 'prefix'],
    ['an unknown onStoreError', { onStoreError: 'ignore' as never }, 'onStoreError'],
    ['storeTimeoutMs 0', { storeTimeoutMs: 0 }, 'storeTimeoutMs'],
    ['standardHeaders 6', { algorithm: 'fixed-window', standardHeaders: 6 as never }, 'standardHeaders'],
    ["standardHeaders 'draft-5'", { algorithm: 'fixed-window', standardHeaders: 'draft-5' as never }, 'standardHeaders'],
    ["legacyHeaders 'yes'", { algorithm: 'fixed-window', legacyHeaders: 'yes' as never }, 'legacyHeaders'],
    ['a keyGenerator string', { algorithm: 'fixed-window', keyGenerator: 'ip' as never }, 'keyGenerator'],
    ['ipv6Subnet 0', { algorithm: 'fixed-window', ipv6Subnet: 0 }, 'ipv6Subnet'],
    ['ipv6Subnet 129', { algorithm: 'fixed-window', ipv6Subnet: 129 }, 'ipv6Subnet'],
    ['ipv6Subnet true', { algorithm: 'fixed-window', ipv6Subnet: true as never }, 'ipv6Subnet'],
    ['an ipv6Subnet function', { algorithm: 'fixed-window', ipv6Subnet: () => 64 }, 'ipv6Subnet'],
    ['ipv6Subnet beside keyGenerator', { algorithm: 'fixed-window', keyGenerator: () => 'k', ipv6Subnet: 64 }, 'ipv6Subnet'],
    ['a skip boolean', { algorithm: 'fixed-window', skip: true as never }, 'skip'],
    ['a handler string', { algorithm: 'fixed-window', handler: 'deny' as never }, 'handler'],
    ['message beside handler', { algorithm: 'fixed-window', handler: () => undefined, message: 'no' }, 'message'],
    ['statusCode 42', { algorithm: 'fixed-window', statusCode: 42 }, 'statusCode'],
    ['statusCode 600', { algorithm: 'fixed-window', statusCode: 600 }, 'statusCode'],
    ['statusCode 429.5', { algorithm: 'fixed-window', statusCode: 429.5 }, 'statusCode'],
    ['an empty requestPropertyName', { algorithm: 'fixed-window', requestPropertyName: '' }, 'requestPropertyName'],
    ['skipFailedRequests 1', { algorithm: 'fixed-window', skipFailedRequests: 1 as never }, 'skipFailedRequests'],
    ['skipSuccessfulRequests "true"', { algorithm: 'fixed-window', skipSuccessfulRequests: 'true' as never }, 'skipSuccessfulRequests'],
    ['a requestWasSuccessful boolean', { algorithm: 'fixed-window', requestWasSuccessful: true as never }, 'requestWasSuccessful'],
    ['a logger without error', { algorithm: 'fixed-window', logger: {} as never }, 'logger'],
    ['trustProxy (Express has its own setting)', { algorithm: 'fixed-window', trustProxy: 1 } as never, 'trustProxy'],
    ['an onError string', { onError: 'log' as never }, 'onError'],
    ['a now number', { algorithm: 'fixed-window', now: 0 as never }, 'now'],
    // express-rate-limit's names ratekit mode has no use for: each error says what to use instead.
    ['max', { algorithm: 'fixed-window', max: 5 }, 'max'],
    ['headers', { algorithm: 'fixed-window', headers: false }, 'headers'],
    ['identifier', { algorithm: 'gcra', identifier: 'burst' }, 'identifier'],
    ['retryAfter', { algorithm: 'fixed-window', retryAfter: 5 }, 'retryAfter'],
    ['passOnStoreError', { algorithm: 'fixed-window', passOnStoreError: true }, 'passOnStoreError'],
    ['validate', { algorithm: 'fixed-window', validate: false }, 'validate'],
  ];

  it.each(table)('%s: rateLimit() throws RateKitOptionError naming the option', (_situation, options, option) => {
    let thrown: unknown;
    try {
      rateLimit(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RateKitOptionError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    expect((thrown as Error).message).toContain(`\`${option}\``);
  });

  it('says what was expected and what was given, and what to use instead of a name it has no use for', () => {
    expect(() => rateLimit({ algorithm: 'fixed-window', statusCode: 42 })).toThrow('[ratekit] Expected `statusCode` to be an integer >= 400, got 42');
    expect(() => rateLimit({ algorithm: 'fixed-window', max: 5 })).toThrow(/did you mean `limit`/);
    expect(() => rateLimit({ algorithm: 'fixed-window', passOnStoreError: true })).toThrow(/onStoreError: 'allow'/);
  });
});
