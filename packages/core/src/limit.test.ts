import type { Decision } from './decision';
import { RateKitOptionError } from './errors';
import { type LimitOptions, resolveLimit } from './limit';
import { createLimiter, type LimiterOptions } from './limiter';
import { stackLimiters } from './stack';
import { memoryStore } from './stores/memory';

/** Runs `build` and returns the option error it throws (fails the test when it throws nothing or something else). */
function optionError(build: () => unknown): RateKitOptionError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(RateKitOptionError);
    return error as RateKitOptionError;
  }
  throw new Error('expected a RateKitOptionError, nothing was thrown');
}

const ok: LimitOptions = { limit: 10, windowMs: 1_000 };
/** A small store: the default one sizes itself for a million keys. */
const small = () => memoryStore({ maxKeys: 10, pruneIntervalMs: 0 });

describe('resolveLimit', () => {
  describe('given valid options', () => {
    it('fills in the documented defaults and derives the emission interval', () => {
      const limit = resolveLimit({ limit: 100, windowMs: 60_000 });
      expect(limit).toMatchObject({
        algorithm: 'fixed-window',
        limit: 100,
        windowMs: 60_000,
        burst: 100,
        refill: 'continuous',
        maxDelayMs: 60_000,
        refusedPenaltyCapMs: undefined,
        emissionIntervalMs: 600,
        name: '100-in-1min',
      });
      expect(Object.isFrozen(limit)).toBe(true);
    });

    it("takes blockDurationMs (default 0) on any algorithm, and keeps it in an unnamed limit's id", () => {
      expect(resolveLimit({ limit: 5, windowMs: 1_000 }).blockDurationMs).toBe(0);
      const blocking = resolveLimit({ algorithm: 'sliding-log', limit: 5, windowMs: 1_000, blockDurationMs: 60_000 });
      expect(blocking.blockDurationMs).toBe(60_000);
      expect(blocking.id).not.toBe(resolveLimit({ algorithm: 'sliding-log', limit: 5, windowMs: 1_000 }).id);
      // Without a block, the id is what it always was, so stored states stay their own.
      expect(resolveLimit({ limit: 5, windowMs: 1_000 }).id).toBe('fixed-window:5:1000:5:continuous:1000:');
      expect(resolveLimit({ limit: 5, windowMs: 1_000, blockDurationMs: 2 ** 31 - 1 }).blockDurationMs).toBe(2 ** 31 - 1);
    });

    it('gives the delay algorithm a burst of 1, so requests are spaced evenly', () => {
      expect(resolveLimit({ algorithm: 'delay', limit: 5, windowMs: 1_000 }).burst).toBe(1);
    });

    it('identifies a named limit by algorithm and name only, an unnamed one by all its parameters', () => {
      const free = resolveLimit({ algorithm: 'gcra', limit: 10, windowMs: 60_000, name: 'plan' });
      const paid = resolveLimit({ algorithm: 'gcra', limit: 100, windowMs: 60_000, name: 'plan' });
      expect(free.id).toBe(paid.id);
      const a = resolveLimit({ algorithm: 'gcra', limit: 10, windowMs: 60_000 });
      const b = resolveLimit({ algorithm: 'gcra', limit: 100, windowMs: 60_000 });
      expect(a.id).not.toBe(b.id);
    });
  });

  describe('given a bad option', () => {
    // [what is wrong, the limit, the option named, part of what is expected, what "got" shows]
    it.each<[string, unknown, string, string, string]>([
      ['not an object', 10, 'limit', 'an object', 'got 10'],
      ['null', null, 'limit', 'an object', 'got null'],
      ['an unknown algorithm', { ...ok, algorithm: 'leaky' }, 'limit.algorithm', "one of 'fixed-window', 'sliding-window'", 'got "leaky"'],
      ['a missing limit', { windowMs: 1_000 }, 'limit.limit', 'a positive finite number', 'got undefined'],
      ['a zero limit', { ...ok, limit: 0 }, 'limit.limit', 'a positive finite number', 'got 0'],
      ['a negative limit', { ...ok, limit: -1 }, 'limit.limit', 'a positive finite number', 'got -1'],
      ['a NaN limit', { ...ok, limit: Number.NaN }, 'limit.limit', 'a positive finite number', 'got NaN'],
      ['an infinite limit', { ...ok, limit: Infinity }, 'limit.limit', 'a positive finite number', 'got Infinity'],
      ['a string limit', { ...ok, limit: '10' }, 'limit.limit', 'a positive finite number', 'got "10"'],
      ['a zero window', { ...ok, windowMs: 0 }, 'limit.windowMs', 'a positive finite number of milliseconds', 'got 0'],
      ['a duration string window', { ...ok, windowMs: '1m' }, 'limit.windowMs', 'of milliseconds', 'got "1m"'],
      ['a zero burst', { ...ok, algorithm: 'token-bucket', burst: 0 }, 'limit.burst', 'a positive finite number', 'got 0'],
      ['a burst on a window algorithm', { ...ok, burst: 5 }, 'limit.burst', "unset unless `algorithm` is 'token-bucket', 'gcra' or 'delay'", 'got 5'],
      ['an unknown refill', { ...ok, algorithm: 'token-bucket', refill: 'sometimes' }, 'limit.refill', "one of 'continuous', 'interval'", 'got "sometimes"'],
      ['a refill on gcra', { ...ok, algorithm: 'gcra', refill: 'interval' }, 'limit.refill', "unset unless `algorithm` is 'token-bucket'", 'got "interval"'],
      ['a negative maxDelayMs', { ...ok, algorithm: 'delay', maxDelayMs: -1 }, 'limit.maxDelayMs', 'a finite number >= 0 of milliseconds', 'got -1'],
      ['a maxDelayMs on gcra', { ...ok, algorithm: 'gcra', maxDelayMs: 10 }, 'limit.maxDelayMs', "unset unless `algorithm` is 'delay'", 'got 10'],
      ['a negative refusedPenaltyCapMs', { ...ok, algorithm: 'delay', refusedPenaltyCapMs: -5 }, 'limit.refusedPenaltyCapMs', 'a finite number >= 0', 'got -5'],
      ['a refusedPenaltyCapMs on a window', { ...ok, refusedPenaltyCapMs: 5 }, 'limit.refusedPenaltyCapMs', "unset unless `algorithm` is 'delay'", 'got 5'],
      ['a negative blockDurationMs', { ...ok, blockDurationMs: -1 }, 'limit.blockDurationMs', 'a finite number >= 0 of milliseconds', 'got -1'],
      ['a NaN blockDurationMs', { ...ok, blockDurationMs: Number.NaN }, 'limit.blockDurationMs', 'a finite number >= 0 of milliseconds', 'got NaN'],
      ['an infinite blockDurationMs', { ...ok, blockDurationMs: Infinity }, 'limit.blockDurationMs', 'a finite number >= 0 of milliseconds', 'got Infinity'],
      ['a blockDurationMs string', { ...ok, blockDurationMs: '15m' }, 'limit.blockDurationMs', 'a finite number >= 0 of milliseconds', 'got "15m"'],
      ['a blockDurationMs beyond Node timers', { ...ok, blockDurationMs: 2 ** 31 }, 'limit.blockDurationMs', 'at most 2147483647 ms', 'got 2147483648'],
      ['a misspelt blockDurationMs', { ...ok, blockDuration: 1_000 }, 'limit.blockDuration', 'did you mean `blockDurationMs`?', 'got 1000'],
      ['an empty name', { ...ok, name: '' }, 'limit.name', 'a non-empty string', 'got ""'],
      ['a non-string name', { ...ok, name: 7 }, 'limit.name', 'a non-empty string', 'got 7'],
    ])('throws naming the option when given %s', (_what, options, option, expected, got) => {
      const error = optionError(() => resolveLimit(options as LimitOptions));
      expect(error.code).toBe('ERR_RATEKIT_INVALID_OPTION');
      expect(error.name).toBe('RateKitOptionError');
      expect(error.message).toMatch(/^\[ratekit\] Expected `/);
      expect(error.option).toBe(option);
      expect(error.expected).toContain(expected);
      expect(error.message).toContain(`\`${option}\``);
      expect(error.message).toContain(expected);
      expect(error.message).toContain(got);
    });
  });
});

describe("the names of a policy's limits", () => {
  it('stay distinct when unnamed limits share a quota and window: a later one is named <default>-2, -3…', () => {
    const limiter = createLimiter({
      limits: [
        { algorithm: 'fixed-window', limit: 16, windowMs: 120_000 },
        { algorithm: 'token-bucket', limit: 16, windowMs: 120_000 },
        { algorithm: 'token-bucket', limit: 16, windowMs: 120_000, burst: 32 },
        { limit: 3, windowMs: 100, name: '16-in-2min-2' },
      ],
      store: memoryStore(),
      now: () => 0,
    });
    const decision = limiter.consume('k') as Decision;
    expect(decision.limits.map((l) => l.name)).toEqual(['16-in-2min', '16-in-2min-3', '16-in-2min-4', '16-in-2min-2']);
  });
});

describe('createLimiter option validation', () => {
  const limits = ok;
  // [what is wrong, the options, the option named, part of the message, what "got" shows]
  it.each<[string, unknown, string, string, string]>([
    ['no options', undefined, 'options', 'an object', 'got undefined'],
    ['no limits', {}, 'limits', 'a limit, an array of limits or a function', 'got undefined'],
    ['an empty list of limits', { limits: [] }, 'limits', 'at least one limit', 'got an array of length 0'],
    ['a bad limit in a list', { limits: [ok, { limit: 5, windowMs: -1 }] }, 'limits[1].windowMs', 'a positive finite number of milliseconds', 'got -1'],
    ['two limits with one identity', { limits: [ok, { ...ok }] }, 'limits[].name', 'distinct limits', 'got "10-in-1sec, 10-in-1sec"'],
    [
      'two limits with one name',
      {
        limits: [
          { ...ok, name: 'a' },
          { limit: 5, windowMs: 9, name: 'a' },
        ],
      },
      'limits[].name',
      'distinct limits',
      'got "a, a"',
    ],
    [
      'two limits of different algorithms given one name (the headers could not tell them apart)',
      {
        limits: [
          { ...ok, name: 'a' },
          { ...ok, algorithm: 'gcra', name: 'a' },
        ],
      },
      'limits[].name',
      'distinct names',
      'got "a, a"',
    ],
    ['a store without evaluate', { limits, store: { name: 'x' } }, 'store', 'a RateLimitStore', 'got an object'],
    ['a store that is a string', { limits, store: 'redis' }, 'store', 'a RateLimitStore', 'got "redis"'],
    ['a prefix with a NUL', { limits, prefix: 'a\u0000b' }, 'prefix', 'a string without NUL characters', 'got "a\\u0000b"'],
    ['a numeric prefix', { limits, prefix: 5 }, 'prefix', 'a string without NUL characters', 'got 5'],
    ['a clock that is a number', { limits, now: 1_700_000_000_000 }, 'now', 'a function', 'got 1700000000000'],
    ['an unknown store error policy', { limits, onStoreError: 'open' }, 'onStoreError', "'throw', 'allow', 'deny' or a fallback limiter", 'got "open"'],
    ['a zero store timeout', { limits, storeTimeoutMs: 0 }, 'storeTimeoutMs', 'a positive finite number of milliseconds', 'got 0'],
    ['a store timeout beyond what timers hold (2 ** 31)', { limits, storeTimeoutMs: 2 ** 31 }, 'storeTimeoutMs', 'at most 2147483647 ms', 'got 2147483648'],
    ['a store timeout of 1e21 ms', { limits, storeTimeoutMs: 1e21 }, 'storeTimeoutMs', 'or Infinity for no timeout', 'got 1e+21'],
    ['a misspelt limit option', { limits: { limit: 5, windowMs: 1_000, burts: 3 } }, 'limits.burts', 'not an option (did you mean `burst`?)', 'got 3'],
    ['a misspelt limiter option', { limits, prefx: 'a' }, 'prefx', 'not an option (did you mean `prefix`?)', 'got "a"'],
    ['an unknown option with no near name', { limits, blockDurationMs: 1_000 }, 'blockDurationMs', 'unset: it is not an option', 'got 1000'],
    [
      'a negative blockDurationMs on a limit of a list',
      { limits: [ok, { limit: 5, windowMs: 1_000, blockDurationMs: -1 }] },
      'limits[1].blockDurationMs',
      'a finite number >= 0 of milliseconds',
      'got -1',
    ],
    [
      'a blockDurationMs beyond what timers hold',
      { limits: { ...ok, blockDurationMs: 2 ** 31 } },
      'limits.blockDurationMs',
      "at most 2147483647 ms (about 24.8 days, what Node's timers hold)",
      'got 2147483648',
    ],
    ['a misspelt blockDurationMs on a limit', { limits: { ...ok, blockDurationMS: 5 } }, 'limits.blockDurationMS', 'did you mean `blockDurationMs`?', 'got 5'],
    ['a window limit below the cost of a request', { limits: { limit: 0.5, windowMs: 1_000 } }, 'limits.limit', 'at least the cost of a request (1)', 'got 0.5'],
    ['a burst below a fixed cost', { limits: [ok, { algorithm: 'gcra', limit: 10, windowMs: 1_000, burst: 2 }], cost: 3 }, 'limits[1].burst', 'at least the cost of a request (3)', 'got 2'],
    ['an onError that is not a function', { limits, onError: true }, 'onError', 'a function', 'got true'],
    ['a negative cost', { limits, cost: -1 }, 'cost', 'a finite number >= 0', 'got -1'],
    ['a string cost', { limits, cost: '1' }, 'cost', 'a finite number >= 0', 'got "1"'],
  ])('throws when built with %s', (_what, options, option, expected, got) => {
    const error = optionError(() => createLimiter(options as LimiterOptions));
    expect(error.code).toBe('ERR_RATEKIT_INVALID_OPTION');
    expect(error.option).toBe(option);
    expect(error.message).toContain(`Expected \`${option}\` to be`);
    expect(error.message).toContain(expected);
    expect(error.message).toContain(got);
  });

  describe('given limits chosen per request by a function', () => {
    it('validates what the function returns on the call that uses it, naming the path', () => {
      const limiter = createLimiter<{ bad: boolean }>({ limits: (ctx) => (ctx.bad ? { limit: 0, windowMs: 1_000 } : ok), now: () => 0, store: small() });
      expect(limiter.consume('k', { context: { bad: false } })).toMatchObject({ allowed: true });
      const error = optionError(() => limiter.consume('k', { context: { bad: true } }));
      expect(error.option).toBe('limits(context).limit');
    });
  });

  describe('given a bad cost at call time', () => {
    it.each([-1, Number.NaN, Infinity])('throws naming `cost` for a per-call cost of %p', (cost) => {
      const limiter = createLimiter({ limits: ok, now: () => 0, store: small() });
      expect(optionError(() => limiter.consume('k', { cost })).option).toBe('cost');
    });

    it('throws naming `cost` when the cost function returns a bad value', () => {
      const limiter = createLimiter({ limits: ok, cost: () => -2, now: () => 0, store: small() });
      const error = optionError(() => limiter.consume('k'));
      expect(error.message).toContain('got -2');
    });
  });

  describe('given a key that is not a string', () => {
    it('throws a coded key error', () => {
      const limiter = createLimiter({ limits: ok, now: () => 0, store: small() });
      expect(() => limiter.consume(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_KEY' }));
    });
  });
});

describe('memoryStore option validation', () => {
  it.each<[string, unknown, string, string, string]>([
    ['a zero maxKeys', { maxKeys: 0 }, 'maxKeys', 'an integer >= 1', 'got 0'],
    ['a fractional maxKeys', { maxKeys: 1.5 }, 'maxKeys', 'an integer >= 1', 'got 1.5'],
    ['a negative pruneIntervalMs', { pruneIntervalMs: -1 }, 'pruneIntervalMs', 'a finite number >= 0 of milliseconds', 'got -1'],
  ])('throws when built with %s', (_what, options, option, expected, got) => {
    const error = optionError(() => memoryStore(options as never));
    expect(error.option).toBe(option);
    expect(error.message).toContain(expected);
    expect(error.message).toContain(got);
  });
});

describe('stackLimiters option validation', () => {
  const limiter = createLimiter({ limits: ok, now: () => 0, store: small() });

  it.each<[string, unknown[], string, string]>([
    ['no limiters', [], 'limiters', 'at least one limiter'],
    ['something that is not a limiter', [limiter, { peek() {} }], 'limiters[1]', 'a limiter'],
  ])('throws when built with %s', (_what, limiters, option, expected) => {
    const error = optionError(() => stackLimiters(...(limiters as never[])));
    expect(error.option).toBe(option);
    expect(error.message).toContain(expected);
  });

  it('throws naming `keys` when given a key per limiter too few', () => {
    const stack = stackLimiters(limiter, limiter);
    const error = optionError(() => stack.consume(['only-one']));
    expect(error.message).toContain('an array of 2 keys, one per limiter');
  });
});
