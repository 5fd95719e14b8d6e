import { memoryStore, RateKitOptionError } from '@ratekit/core';
import { MemoryStore } from './memory-store.js';
import { type CounterConfig, resolveOptions } from './options.js';
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
  return resolveOptions(options);
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

  describe('options that select ratekit mode', () => {
    it('are refused here: rateLimit() sends them to ratekit mode first, and slowDown() has none', () => {
      expect(() => resolveOptions({ algorithm: 'gcra' })).toThrow(RateKitOptionError);
      expect(() => resolveOptions({ store: memoryStore() })).toThrow(/`store`/);
    });

    it('are not refused when set to undefined', () => {
      expect(resolveOptions({ algorithm: undefined, prefix: undefined }).mode).toBe('express-rate-limit');
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

  it('throws on options that are not an object', () => {
    expect(() => resolveOptions('fast' as never)).toThrow(RateKitOptionError);
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
