import * as core from '../index';
import type { Decision } from '../decision';
import { RateKitOptionError } from '../errors';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import { DEFAULT_REFUSAL_MESSAGE, type HeaderOptions, rateLimitHeaders } from './index';

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

/** A limiter on a fixed clock: `hit(atMs, cost)` consumes for one key at T0 + atMs. */
function timeline(limits: LimitsOption<unknown>) {
  let now = T0;
  const limiter = createLimiter({ limits, store: memoryStore({ maxKeys: 16, pruneIntervalMs: 0 }), now: () => now });
  return (atMs = 0, cost = 1): Decision => {
    now = T0 + atMs;
    return limiter.consume('127.0.0.1', { cost }) as Decision;
  };
}

/** Limit 3 per 60 s: the first request, and the 4th (refused). */
function firstAndRefused(): [Decision, Decision] {
  const hit = timeline({ limit: 3, windowMs: 60_000 });
  const first = hit();
  hit();
  hit();
  return [first, hit()];
}

describe('rateLimitHeaders', () => {
  describe('with legacy and draft-6 headers (express-rate-limit standardHeaders: true, legacyHeaders default)', () => {
    const options: HeaderOptions = { standardHeaders: 'draft-6', legacyHeaders: true };

    it('sends both sets, legacy first, as express-rate-limit does', () => {
      const [first] = firstAndRefused();
      expect(rateLimitHeaders(first, options)).toEqual([
        ['X-RateLimit-Limit', '3'],
        ['X-RateLimit-Remaining', '2'],
        ['X-RateLimit-Reset', '1795262460'],
        ['RateLimit-Policy', '3;w=60'],
        ['RateLimit-Limit', '3'],
        ['RateLimit-Remaining', '2'],
        ['RateLimit-Reset', '60'],
      ]);
    });

    it('ends a refusal with Retry-After', () => {
      const [, refused] = firstAndRefused();
      const headers = rateLimitHeaders(refused, options);
      expect(headers.at(-1)).toEqual(['Retry-After', '60']);
      expect(headers.filter(([name]) => name === 'Retry-After')).toHaveLength(1);
    });
  });

  describe('with legacy and draft-7 headers on a refusal', () => {
    it('sends the express-rate-limit bytes in its order', () => {
      const hit = timeline({ limit: 1, windowMs: 60_000 });
      hit();
      expect(rateLimitHeaders(hit(), { standardHeaders: 'draft-7', legacyHeaders: true })).toEqual([
        ['X-RateLimit-Limit', '1'],
        ['X-RateLimit-Remaining', '0'],
        ['X-RateLimit-Reset', '1795262460'],
        ['RateLimit-Policy', '1;w=60'],
        ['RateLimit', 'limit=1, remaining=0, reset=60'],
        ['Retry-After', '60'],
      ]);
    });
  });

  describe('Retry-After presence', () => {
    // [options, sent on a refusal?]
    it.each<[string, HeaderOptions, boolean]>([
      ['legacy only', { standardHeaders: false, legacyHeaders: true }, true],
      ['standard only', { standardHeaders: 'draft-8', legacyHeaders: false }, true],
      ['both off (express-rate-limit sends nothing)', { standardHeaders: false, legacyHeaders: false }, false],
      ['both off, retryAfter: true', { standardHeaders: false, legacyHeaders: false, retryAfter: true }, true],
      ['both on, retryAfter: false', { standardHeaders: 'draft-7', legacyHeaders: true, retryAfter: false }, false],
    ])('%s: %p → %p', (_label, options, expected) => {
      const [first, refused] = firstAndRefused();
      expect(rateLimitHeaders(first, options).some(([name]) => name === 'Retry-After')).toBe(false);
      expect(rateLimitHeaders(refused, options).some(([name]) => name === 'Retry-After')).toBe(expected);
    });

    it('sends nothing at all with both header sets off and Retry-After left to the default', () => {
      const [, refused] = firstAndRefused();
      expect(rateLimitHeaders(refused, { standardHeaders: false, legacyHeaders: false })).toEqual([]);
    });

    it('is not sent for a request admitted with a delay (delay algorithm)', () => {
      const hit = timeline({ algorithm: 'delay', limit: 1, windowMs: 1_000 });
      hit();
      const delayed = hit();
      expect(delayed).toMatchObject({ allowed: true, delayMs: 1_000 });
      expect(rateLimitHeaders(delayed, { standardHeaders: 'draft-8', legacyHeaders: true }).some(([n]) => n === 'Retry-After')).toBe(false);
    });
  });

  describe('given options that were not validated', () => {
    it.each<[string, unknown]>([
      ['standardHeaders', { standardHeaders: 'draft-12', legacyHeaders: false }],
      ['standardHeaders', { standardHeaders: true, legacyHeaders: false }],
      ['legacyReset', { standardHeaders: false, legacyHeaders: true, legacyReset: 'seconds' }],
      ['style', { standardHeaders: 'draft-8', legacyHeaders: false, style: 'compact' }],
    ])('throws a coded error naming %s', (option, options) => {
      const [first] = firstAndRefused();
      expect(() => rateLimitHeaders(first, options as HeaderOptions)).toThrow(RateKitOptionError);
      expect(() => rateLimitHeaders(first, options as HeaderOptions)).toThrow(`\`${option}\``);
    });
  });

  it('writes every value as a string of printable ASCII', () => {
    const [, refused] = firstAndRefused();
    for (const standardHeaders of [false, 'draft-6', 'draft-7', 'draft-8'] as const) {
      for (const [name, value] of rateLimitHeaders(refused, { standardHeaders, legacyHeaders: true, partitionKey: 'k' })) {
        expect(typeof value).toBe('string');
        expect(value).toMatch(/^[\x20-\x7e]+$/);
        expect(name).toMatch(/^[A-Za-z-]+$/);
      }
    }
  });

  it('gives the result shown in its TSDoc example', () => {
    const limiter = createLimiter({ limits: { limit: 100, windowMs: 15 * 60_000 }, store: memoryStore({ maxKeys: 16, pruneIntervalMs: 0 }) });
    const decision = limiter.consume('127.0.0.1') as Decision;
    expect(rateLimitHeaders(decision, { standardHeaders: 'draft-8', legacyHeaders: false, partitionKey: '127.0.0.1' })).toEqual([
      ['RateLimit', '"100-in-15min"; r=99; t=900'],
      ['RateLimit-Policy', '"100-in-15min"; q=100; w=900; pk=:MTJjYTE3YjQ5YWYy:'],
    ]);
  });
});

describe('DEFAULT_REFUSAL_MESSAGE', () => {
  it("is express-rate-limit's default message", () => {
    expect(DEFAULT_REFUSAL_MESSAGE).toBe('Too many requests, please try again later.');
  });
});

describe('@ratekit/core header exports', () => {
  it('re-exports the header API from the package entry', () => {
    expect(core.rateLimitHeaders).toBe(rateLimitHeaders);
    expect(core.DEFAULT_REFUSAL_MESSAGE).toBe(DEFAULT_REFUSAL_MESSAGE);
    expect(core.partitionKey('foo')).toBe('MmMyNmI0NmI2OGZm');
    expect(core.defaultPolicyName(7, 90_000)).toBe('7-in-1.5min');
    expect(core.STANDARD_HEADER_DRAFTS).toContain('draft-11');
    expect(typeof core.resolveHeaderOptions).toBe('function');
    expect(typeof core.retryAfterSeconds).toBe('function');
    expect(typeof core.assertPolicyName).toBe('function');
  });
});
