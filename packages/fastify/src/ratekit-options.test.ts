import type { RateLimitOptions, RateLimitPluginOptions } from './types.js';
import { mergeOptions, resolveRegistration, resolveRouteSettings } from './ratekit-options.js';

const register = (options: RateLimitPluginOptions | undefined) => resolveRegistration(options);

describe('resolveRegistration', () => {
  describe('with no options', () => {
    it("takes @fastify/rate-limit's defaults: global, 1000 per minute, fixed window, onRequest, legacy headers with a delta reset", () => {
      const { settings, global, nameSpace, cache } = register(undefined);
      expect({ global, nameSpace, cache }).toEqual({ global: true, nameSpace: 'fastify-rate-limit-', cache: 5_000 });
      expect(settings.gate).toMatchObject({ limits: { algorithm: 'fixed-window', limit: 1000, windowMs: 60_000 }, onStoreError: 'throw', standardHeaders: false, legacyHeaders: true, ipv6Subnet: 56 });
      expect(settings.hook).toBe('onRequest');
      expect(settings.ban).toBe(-1);
      expect(settings.headers).toMatchObject({ standardHeaders: false, legacyHeaders: true, legacyReset: 'delta', combineLists: true });
    });
  });

  describe('header format', () => {
    it.each<[RateLimitOptions, unknown]>([
      [{ enableDraftSpec: true }, { standardHeaders: 'draft-6', legacyHeaders: false }],
      [{ standardHeaders: 'draft-8' }, { standardHeaders: 'draft-8', legacyHeaders: false }],
      [
        { standardHeaders: 'draft-7', legacyHeaders: true },
        { standardHeaders: 'draft-7', legacyHeaders: true },
      ],
      [{ enableDraftSpec: false }, { standardHeaders: false, legacyHeaders: true }],
      [{ standardHeaders: true }, { standardHeaders: 'draft-6', legacyHeaders: false }],
    ])('%j sends %j', (options, expected) => {
      expect(register(options).settings.headers).toMatchObject(expected as object);
    });

    it('sends nothing with legacyHeaders: false and no standard headers', () => {
      expect(register({ legacyHeaders: false }).settings.headers).toBeUndefined();
    });

    it('keeps the names switched off by addHeaders / addHeadersOnExceeding, in lower case', () => {
      const { settings } = register({ addHeaders: { 'Retry-After': false, 'x-ratelimit-limit': true } as never, addHeadersOnExceeding: { 'x-ratelimit-reset': false } });
      expect([...(settings.hiddenOnRefusal ?? [])]).toEqual(['retry-after']);
      expect([...(settings.hiddenOnPass ?? [])]).toEqual(['x-ratelimit-reset']);
    });

    it('rejects a header the active format does not send (it would silently do nothing in @fastify/rate-limit)', () => {
      expect(() => register({ enableDraftSpec: true, addHeadersOnExceeding: { 'x-ratelimit-limit': false } })).toThrow(
        expect.objectContaining({ option: "addHeadersOnExceeding['x-ratelimit-limit']", message: expect.stringContaining("'ratelimit-limit'") }),
      );
      expect(() => register({ addHeadersOnExceeding: { 'retry-after': false } })).toThrow(expect.objectContaining({ option: "addHeadersOnExceeding['retry-after']" }));
    });
  });

  describe('bad options', () => {
    it.each<[string, Record<string, unknown>, string]>([
      ['global', { global: 'yes' }, 'a boolean'],
      ['cache', { cache: 0 }, 'an integer >= 1'],
      ['nameSpace', { nameSpace: 5 }, 'a string'],
      ['now', { now: 5 }, 'a function'],
      ['store', { store: {} }, 'a ratekit RateLimitStore'],
      ['store', { store: null }, 'a ratekit RateLimitStore'],
      ['algorithm', { algorithm: 'leaky' }, "one of 'fixed-window'"],
      ['limits', { limits: [] }, 'at least one limit'],
      [
        'limits[1].windowMs',
        {
          limits: [
            { limit: 1, windowMs: 1 },
            { limit: 1, windowMs: 0 },
          ],
        },
        'a positive finite number of milliseconds',
      ],
      ['ipv6Subnet', { ipv6Subnet: 129, keyGenerator: () => 'k' }, 'an integer from 1 to 128, or false'],
      ['allowList', { allowList: [1] }, 'an array of key strings or a function'],
      ['groupId', { groupId: '' }, 'a non-empty string'],
      ['errorResponseBuilder', { errorResponseBuilder: {} }, 'a function'],
      ['onExceeded', { onExceeded: true }, 'a function'],
      ['skipOnError', { skipOnError: true, onStoreError: 'deny' }, 'unset when `onStoreError` is set'],
      ['ban', { ban: -2 }, 'an integer >= -1'],
      ['continueExceeding', { continueExceeding: 1 }, 'a boolean'],
      ['continueExceeding', { continueExceeding: true, limits: () => ({ limit: 1, windowMs: 1 }) }, 'the policy is one limit'],
      ['standardHeaders', { standardHeaders: 'draft-5' }, "false, true or one of 'draft-6'"],
      ['exponentialBackoff', { exponentialBackoff: true }, 'use `continueExceeding`'],
      ['whitelist', { whitelist: [] }, 'renamed `allowList`'],
    ])('`%s`: throws a RateKitOptionError naming it', (option, options, expected) => {
      expect(() => register(options as RateLimitPluginOptions)).toThrow(
        expect.objectContaining({ name: 'RateKitOptionError', code: 'ERR_RATEKIT_INVALID_OPTION', option, message: expect.stringContaining(expected) }),
      );
    });

    it("ignores Fastify's own register options (prefix, logLevel)", () => {
      expect(() => register({ prefix: '/v1', logLevel: 'warn' } as RateLimitPluginOptions)).not.toThrow();
    });
  });
});

describe('resolveRouteSettings', () => {
  const base = register({ max: 100, standardHeaders: 'draft-7', skipOnError: true }).base;

  it('names a bad route option with its path', () => {
    expect(() => resolveRouteSettings(base, { max: 1.5 }, 'config.rateLimit.')).toThrow(expect.objectContaining({ option: 'config.rateLimit.max' }));
  });

  it('refuses a registration-only option on a route', () => {
    expect(() => resolveRouteSettings(base, { nameSpace: 'x' }, 'config.rateLimit.')).toThrow(
      expect.objectContaining({ option: 'config.rateLimit.nameSpace', message: expect.stringContaining('it is a plugin option') }),
    );
  });

  it('inherits what the route does not set', () => {
    const settings = resolveRouteSettings(base, { max: 5 }, 'config.rateLimit.');
    expect(settings.gate).toMatchObject({ limits: { algorithm: 'fixed-window', limit: 5, windowMs: 60_000 }, standardHeaders: 'draft-7', onStoreError: 'allow' });
  });
});

describe('mergeOptions', () => {
  describe('related options are replaced together', () => {
    it.each<[RateLimitOptions, RateLimitOptions, RateLimitOptions]>([
      [{ max: 5, timeWindow: 1000, algorithm: 'gcra' }, { limits: { limit: 1, windowMs: 1 } }, { limits: { limit: 1, windowMs: 1 } }],
      [{ limits: { limit: 1, windowMs: 1 } }, { max: 3 }, { max: 3 }],
      [{ max: 5, timeWindow: 1000 }, { max: 3 }, { max: 3, timeWindow: 1000 }],
      [{ enableDraftSpec: true }, { standardHeaders: 'draft-8' }, { standardHeaders: 'draft-8' }],
      [{ standardHeaders: 'draft-8', legacyHeaders: true }, { enableDraftSpec: true }, { enableDraftSpec: true }],
      [{ skipOnError: true }, { onStoreError: 'deny' }, { onStoreError: 'deny' }],
      [{ onStoreError: 'deny' }, { skipOnError: true }, { skipOnError: true }],
      [{ addHeaders: { 'retry-after': false } }, { addHeaders: { 'x-ratelimit-limit': false } }, { addHeaders: { 'x-ratelimit-limit': false } }],
    ])('%j under %j gives %j', (plugin, route, merged) => {
      expect(mergeOptions(plugin, route)).toEqual(merged);
    });
  });

  it('treats an option given as undefined as not given, and mutates neither input', () => {
    const plugin: RateLimitOptions = { max: 5 };
    const route: RateLimitOptions = { max: undefined, ban: 1 };
    expect(mergeOptions(plugin, route)).toEqual({ max: 5, ban: 1 });
    expect([plugin, route]).toEqual([{ max: 5 }, { max: undefined, ban: 1 }]);
  });
});
