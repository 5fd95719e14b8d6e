import { memoryStore, RateKitOptionError } from '@ratekit/core';
import { MemoryStore } from './memory-store.js';
import { type Config, type CounterConfig, type RateKitConfig, resolveOptions } from './options.js';
import { rateLimit } from '../rate-limit.js';
import type { Logger, RateLimitOptions } from '../types.js';

/** Collects what the configuration checks log. */
function recordingLogger() {
  const logged: Array<{ level: 'warn' | 'error'; code: string | undefined; message: string }> = [];
  const logger: Logger = {
    warn: (error) => logged.push({ level: 'warn', code: (error as { code?: string }).code, message: (error as Error).message }),
    error: (error) => logged.push({ level: 'error', code: (error as { code?: string }).code, message: (error as Error).message }),
  };
  return { logger, logged };
}

function counterConfig(options: RateLimitOptions = {}): CounterConfig {
  const config = resolveOptions(options);
  if (config.mode !== 'express-rate-limit') throw new Error(`expected express-rate-limit mode, got ${config.mode}`);
  return config;
}

function rateKitConfig(options: RateLimitOptions): RateKitConfig {
  const config = resolveOptions(options);
  if (config.mode !== 'ratekit') throw new Error(`expected ratekit mode, got ${config.mode}`);
  return config;
}

describe('resolveOptions', () => {
  describe('with no options', () => {
    it("applies express-rate-limit v8's defaults", () => {
      const { public: resolved } = counterConfig();
      expect(resolved).toMatchObject({
        windowMs: 60_000,
        limit: 5,
        standardHeaders: false,
        legacyHeaders: true,
        statusCode: 429,
        message: 'Too many requests, please try again later.',
        requestPropertyName: 'rateLimit',
        skipFailedRequests: false,
        skipSuccessfulRequests: false,
        passOnStoreError: false,
        ipv6Subnet: 56,
        validate: { default: true },
      });
      // Handed over as express-rate-limit hands them over: not frozen.
      expect(Object.isFrozen(resolved)).toBe(false);
    });

    it('gives handlers every default as a function where express-rate-limit has one', () => {
      const { public: resolved } = counterConfig();
      for (const name of ['keyGenerator', 'handler', 'skip', 'requestWasSuccessful', 'identifier'] as const) expect(typeof resolved[name]).toBe('function');
    });

    it('counts with a MemoryStore of its own', () => {
      const a = counterConfig();
      const b = counterConfig();
      expect(a.store).toBeInstanceOf(MemoryStore);
      expect(a.store).not.toBe(b.store);
      expect(a.public.store).toBe(a.store);
    });

    it('keeps mode and limiter off the enumerable options, which express-rate-limit has not', () => {
      const { public: resolved } = counterConfig();
      expect(resolved.mode).toBe('express-rate-limit');
      expect(resolved.limiter).toBeUndefined();
      expect(Object.keys(resolved)).not.toContain('mode');
      expect(Object.keys(resolved)).not.toContain('limiter');
    });
  });

  describe('the mode', () => {
    const table: Array<[string, RateLimitOptions, Config['mode']]> = [
      ['no options', {}, 'express-rate-limit'],
      ['express-rate-limit options only', { windowMs: 1_000, limit: 2, standardHeaders: 'draft-8', max: 3, validate: false }, 'express-rate-limit'],
      ['an express-rate-limit store', { store: new MemoryStore() }, 'express-rate-limit'],
      ['a clock (neutral)', { now: () => 0 }, 'express-rate-limit'],
      ['algorithm', { algorithm: 'fixed-window' }, 'ratekit'],
      ['limits', { limits: { limit: 1, windowMs: 1_000 } }, 'ratekit'],
      ['cost', { cost: 1 }, 'ratekit'],
      ['prefix', { prefix: 'a' }, 'ratekit'],
      ['onStoreError', { onStoreError: 'allow' }, 'ratekit'],
      ['storeTimeoutMs', { storeTimeoutMs: 50 }, 'ratekit'],
      ['onError', { onError: () => undefined }, 'ratekit'],
      ['a ratekit store', { store: memoryStore() }, 'ratekit'],
    ];

    it.each(table)('%s: %s mode', (_situation, options, mode) => {
      const config = resolveOptions(options);
      expect(config.mode).toBe(mode);
      expect(config.public.mode).toBe(mode);
    });

    it('ignores ratekit options set to undefined', () => {
      expect(resolveOptions({ algorithm: undefined, prefix: undefined }).mode).toBe('express-rate-limit');
    });
  });

  describe('ratekit mode', () => {
    it('builds one limit from windowMs, limit and algorithm, named by identifier when given', () => {
      const { limiter } = rateKitConfig({ windowMs: 1_000, limit: 10, algorithm: 'gcra', identifier: 'burst' });
      expect(limiter.limitsFor()).toEqual([expect.objectContaining({ algorithm: 'gcra', limit: 10, windowMs: 1_000, name: 'burst' })]);
    });

    it('takes several limits as given; handlers see the first one as windowMs and limit', () => {
      const { limiter, public: resolved } = rateKitConfig({
        limits: [
          { limit: 10, windowMs: 1_000 },
          { limit: 100, windowMs: 60_000 },
        ],
      });
      expect(limiter.limitsFor().map((l) => l.name)).toEqual(['10-in-1sec', '100-in-1min']);
      expect(resolved).toMatchObject({ windowMs: 1_000, limit: 10, algorithm: 'fixed-window' });
      expect(resolved.limiter).toBe(limiter);
    });

    it('needs the request as context only when limits or cost is a function', () => {
      expect(rateKitConfig({ algorithm: 'fixed-window' }).needsContext).toBe(false);
      expect(rateKitConfig({ limits: () => ({ limit: 1, windowMs: 1 }) }).needsContext).toBe(true);
      expect(rateKitConfig({ cost: () => 1 }).needsContext).toBe(true);
    });

    it('turns passOnStoreError: true into onStoreError "allow"', async () => {
      const failing = { ...memoryStore(), name: 'failing', evaluate: () => Promise.reject(new Error('down')) };
      const { limiter } = rateKitConfig({ store: failing, passOnStoreError: true, onError: () => undefined });
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
    });

    it('sends no headers at all when both header sets are off', () => {
      expect(rateKitConfig({ algorithm: 'gcra', standardHeaders: false, legacyHeaders: false }).headers).toBeUndefined();
      expect(rateKitConfig({ algorithm: 'gcra', legacyHeaders: false, standardHeaders: 'draft-7' }).headers).toMatchObject({ standardHeaders: 'draft-7', legacyHeaders: false });
    });

    it('uses a shared ratekit store as given', () => {
      const store = memoryStore();
      expect(rateKitConfig({ store }).limiter.store).toBe(store);
      store.dispose();
    });
  });

  describe('standardHeaders', () => {
    it.each([
      [undefined, false, false],
      [false, false, false],
      [true, 'draft-6', false],
      ['draft-6', 'draft-6', false],
      ['draft-7', 'draft-7', false],
      ['draft-8', 'draft-8', false],
      ['draft-11', false, true], // express-rate-limit v8 writes draft-6 to draft-8 only
      ['draft-5', false, true],
      [6, false, true], // any other truthy value is an unsupported draft, logged once
    ] as const)('%p sends %p (unsupported: %p)', (given, draft, unsupported) => {
      expect(counterConfig({ standardHeaders: given as never }).standard).toMatchObject({ draft, unsupported });
    });

    it('shows handlers the normalised value, as express-rate-limit does', () => {
      expect(counterConfig({ standardHeaders: true }).public.standardHeaders).toBe('draft-6');
    });

    it('turns Retry-After on for any truthy value, unsupported ones included', () => {
      expect(counterConfig({ standardHeaders: 'draft-5' as never, legacyHeaders: false }).standard.retryAfter).toBe(true);
      expect(counterConfig({ legacyHeaders: false }).standard.retryAfter).toBe(false);
    });
  });

  describe('deprecated names', () => {
    it('max is limit when limit is unset; limit wins when both are given', () => {
      expect(counterConfig({ max: 7 }).limit).toBe(7);
      expect(counterConfig({ max: 7, limit: 3 }).limit).toBe(3);
    });

    it('headers is legacyHeaders when legacyHeaders is unset', () => {
      expect(counterConfig({ headers: false }).legacyHeaders).toBe(false);
      expect(counterConfig({ headers: false, legacyHeaders: true }).legacyHeaders).toBe(true);
    });
  });

  describe('with an option of the wrong type, in express-rate-limit mode', () => {
    // express-rate-limit accepts these: its checks log what they log, and each value is used as given
    // (taken for its truth, or compared as its arithmetic compares it). The values it takes and then
    // fails with on every request are refused when built: see failing-options.test.ts.
    const table: Array<[string, RateLimitOptions]> = [
      ['windowMs "1m"', { windowMs: '1m' as never }],
      ['limit -1', { limit: -1 }],
      ['max "5"', { max: '5' as never }],
      ['standardHeaders 6', { standardHeaders: 6 as never }],
      ["legacyHeaders 'yes'", { legacyHeaders: 'yes' as never }],
      ['ipv6Subnet 0', { ipv6Subnet: 0 }],
      ['ipv6Subnet 129', { ipv6Subnet: 129 }],
      ['ipv6Subnet true', { ipv6Subnet: true as never }],
      ['statusCode 600', { statusCode: 600 }],
      ['an empty requestPropertyName', { requestPropertyName: '' }],
      ['skipFailedRequests 1', { skipFailedRequests: 1 as never }],
      ['skipSuccessfulRequests "true"', { skipSuccessfulRequests: 'true' as never }],
      ['passOnStoreError "yes"', { passOnStoreError: 'yes' as never }],
      ['a requestWasSuccessful boolean', { requestWasSuccessful: true as never }],
      ['retryAfter -1', { retryAfter: -1 }],
      ['an identifier with a newline', { identifier: 'a\nb' }],
      ['validate "yes"', { validate: 'yes' as never }],
    ];

    it.each(table)('%s: builds the limiter, as express-rate-limit does', (_situation, options) => {
      const { logger } = recordingLogger();
      expect(() => resolveOptions({ ...options, logger })).not.toThrow();
    });

    it('takes a non-boolean flag for its truth', () => {
      expect(counterConfig({ legacyHeaders: 0 as never }).legacyHeaders).toBe(false);
      expect(counterConfig({ skipFailedRequests: 'yes' as never }).skipFailedRequests).toBe(true);
    });

    it('logs ERR_ERL_IPV6_SUBNET for a fractional ipv6Subnet, and builds', () => {
      const { logger, logged } = recordingLogger();
      expect(() => resolveOptions({ ipv6Subnet: 48.5, logger })).not.toThrow();
      expect(logged.map((l) => l.code)).toEqual(['ERR_ERL_IPV6_SUBNET']);
    });
  });

  describe('with an option of the wrong type', () => {
    // Each row: the options, and the option the error must name.
    const table: Array<[string, RateLimitOptions, string]> = [
      ['ratekit mode, windowMs "1m"', { algorithm: 'fixed-window', windowMs: '1m' as never }, 'windowMs'],
      ['ratekit mode, limit -1', { algorithm: 'fixed-window', limit: -1 }, 'limit'],
      ['ratekit mode, limit NaN', { algorithm: 'fixed-window', limit: Number.NaN }, 'limit'],
      ['ratekit mode, max "5"', { algorithm: 'fixed-window', max: '5' as never }, 'max'],
      ['ratekit mode, windowMs 0', { algorithm: 'fixed-window', windowMs: 0 }, 'windowMs'],
      ['ratekit mode, limit 0', { algorithm: 'fixed-window', limit: 0 }, 'limit'],
      ['ratekit mode, a limit function', { algorithm: 'gcra', limit: () => 5 }, 'limit'],
      ['ratekit mode, an identifier function', { algorithm: 'gcra', identifier: () => 'x' }, 'identifier'],
      ['ratekit mode, an express-rate-limit store', { algorithm: 'gcra', store: new MemoryStore() }, 'store'],
      ['ratekit mode, passOnStoreError beside onStoreError', { onStoreError: 'deny', passOnStoreError: true }, 'passOnStoreError'],
      ['an unknown algorithm', { algorithm: 'leaky' as never }, 'algorithm'],
      ['windowMs beside limits', { limits: { limit: 1, windowMs: 1_000 }, windowMs: 1_000 }, 'windowMs'],
      ['limit beside limits', { limits: { limit: 1, windowMs: 1_000 }, limit: 2 }, 'limit'],
      ['algorithm beside limits', { limits: { limit: 1, windowMs: 1_000 }, algorithm: 'gcra' }, 'algorithm'],
      ['identifier beside limits', { limits: { limit: 1, windowMs: 1_000 }, identifier: 'x' }, 'identifier'],
      ['an empty limits array', { limits: [] }, 'limits'],
      ['a limit without windowMs', { limits: { limit: 1 } as never }, 'limits.windowMs'],
      ['a negative cost', { cost: -1 }, 'cost'],
      ['a prefix with NUL', { prefix: 'a\u0000b' }, 'prefix'],
      ['an unknown onStoreError', { onStoreError: 'ignore' as never }, 'onStoreError'],
      ['storeTimeoutMs 0', { storeTimeoutMs: 0 }, 'storeTimeoutMs'],
      ['ratekit mode, standardHeaders 6', { algorithm: 'fixed-window', standardHeaders: 6 as never }, 'standardHeaders'],
      ["ratekit mode, legacyHeaders 'yes'", { algorithm: 'fixed-window', legacyHeaders: 'yes' as never }, 'legacyHeaders'],
      ['ratekit mode, a keyGenerator string', { algorithm: 'fixed-window', keyGenerator: 'ip' as never }, 'keyGenerator'],
      ['ratekit mode, ipv6Subnet 0', { algorithm: 'fixed-window', ipv6Subnet: 0 }, 'ipv6Subnet'],
      ['ratekit mode, ipv6Subnet 129', { algorithm: 'fixed-window', ipv6Subnet: 129 }, 'ipv6Subnet'],
      ['ratekit mode, ipv6Subnet true', { algorithm: 'fixed-window', ipv6Subnet: true as never }, 'ipv6Subnet'],
      ['ratekit mode, a skip boolean', { algorithm: 'fixed-window', skip: true as never }, 'skip'],
      ['ratekit mode, a handler string', { algorithm: 'fixed-window', handler: 'deny' as never }, 'handler'],
      ['ratekit mode, statusCode 42', { algorithm: 'fixed-window', statusCode: 42 }, 'statusCode'],
      ['ratekit mode, statusCode 600', { algorithm: 'fixed-window', statusCode: 600 }, 'statusCode'],
      ['ratekit mode, statusCode 429.5', { algorithm: 'fixed-window', statusCode: 429.5 }, 'statusCode'],
      ['ratekit mode, an empty requestPropertyName', { algorithm: 'fixed-window', requestPropertyName: '' }, 'requestPropertyName'],
      ['ratekit mode, skipFailedRequests 1', { algorithm: 'fixed-window', skipFailedRequests: 1 as never }, 'skipFailedRequests'],
      ['ratekit mode, skipSuccessfulRequests "true"', { algorithm: 'fixed-window', skipSuccessfulRequests: 'true' as never }, 'skipSuccessfulRequests'],
      ['ratekit mode, passOnStoreError "yes"', { algorithm: 'fixed-window', passOnStoreError: 'yes' as never }, 'passOnStoreError'],
      ['ratekit mode, a requestWasSuccessful boolean', { algorithm: 'fixed-window', requestWasSuccessful: true as never }, 'requestWasSuccessful'],
      ['ratekit mode, retryAfter -1', { algorithm: 'fixed-window', retryAfter: -1 }, 'retryAfter'],
      ['ratekit mode, an identifier with a newline', { algorithm: 'fixed-window', identifier: 'a\nb' }, 'identifier'],
      ['ratekit mode, validate "yes"', { algorithm: 'fixed-window', validate: 'yes' as never }, 'validate'],
      ['an onError string', { onError: 'log' as never }, 'onError'],
      ['a now number', { now: 0 as never }, 'now'],
    ];

    it.each(table)('%s: throws RateKitOptionError naming the option', (_situation, options, option) => {
      let thrown: unknown;
      try {
        resolveOptions(options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(RateKitOptionError);
      expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
      expect((thrown as Error).message).toContain(`\`${option}\``);
    });

    it('throws from rateLimit() itself, before any request', () => {
      expect(() => rateLimit({ algorithm: 'gcra', limit: 0 })).toThrow(RateKitOptionError);
    });

    it('says what was expected and what was given', () => {
      expect(() => resolveOptions({ algorithm: 'fixed-window', statusCode: 42 })).toThrow('[ratekit] Expected `statusCode` to be an integer from 100 to 599, got 42');
    });

    it('throws on options that are not an object', () => {
      expect(() => resolveOptions('fast' as never)).toThrow(RateKitOptionError);
    });
  });

  describe("with express-rate-limit's own construction errors", () => {
    it('throws its TypeError for a store without increment, decrement and resetKey', () => {
      expect(() => resolveOptions({ store: {} as never })).toThrow(new TypeError('An invalid store was passed. Please ensure that the store is a class that implements the `Store` interface.'));
    });

    it('throws its TypeError for a store whose optional init is not a function', () => {
      const store = { increment: () => ({ totalHits: 1, resetTime: undefined }), decrement: () => undefined, resetKey: () => undefined, init: 'yes' };
      expect(() => resolveOptions({ store: store as never })).toThrow(TypeError);
    });

    it('throws its TypeError for a logger without warn and error', () => {
      expect(() => resolveOptions({ logger: { error: () => undefined } as never })).toThrow(new TypeError('Provided logger does not implement the Logger interface'));
    });
  });

  describe('with values express-rate-limit accepts and reports', () => {
    it('logs an unknown option once, by name, and carries it to handlers', () => {
      const { logger, logged } = recordingLogger();
      const { public: resolved } = resolveOptions({ windowMS: 1_000, logger } as never);
      expect(logged).toEqual([{ level: 'error', code: 'ERR_ERL_UNKNOWN_OPTION', message: expect.stringContaining('Unexpected configuration option: windowMS') }]);
      expect((resolved as unknown as Record<string, unknown>)['windowMS']).toBe(1_000);
    });

    it('accepts limit 0, which refuses everything', () => {
      expect(counterConfig({ limit: 0 }).limit).toBe(0);
    });

    it('accepts ipv6Subnet beside a keyGenerator, and logs that it is ignored', () => {
      const { logger, logged } = recordingLogger();
      resolveOptions({ keyGenerator: () => 'k', ipv6Subnet: 64, logger });
      expect(logged.map((l) => l.code)).toEqual(['ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR']);
    });
  });

  describe('with explicitly undefined options', () => {
    it('treats them as omitted', () => {
      const { public: resolved } = counterConfig({ windowMs: undefined, limit: undefined, store: undefined, message: undefined });
      expect(resolved).toMatchObject({ windowMs: 60_000, limit: 5, message: 'Too many requests, please try again later.' });
    });
  });
});
