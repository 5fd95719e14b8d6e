import { parseRateLimit } from 'ratelimit-header-parser';
import type { Decision } from '../decision';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import { rateLimitHeaders } from './index';
import type { HeaderList } from './options';

/** Sat, 21 Nov 2026 12:00:00 GMT (epoch 1795262400): the instant of the reference examples. */
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

/** headers.md §4.3: "10-in-1sec" has 7 left (resets in 1 s), "100-in-1min" 5 left (resets in 23 s). */
function workedExample(): Decision {
  const hit = timeline([
    { limit: 10, windowMs: 1_000 },
    { limit: 100, windowMs: 60_000 },
  ]);
  for (let s = 0; s < 9; s++) hit(-37_000 + s * 1_000, 10);
  hit(-28_000, 2);
  hit();
  hit();
  return hit();
}

const epoch = { legacyHeaders: true, standardHeaders: false } as const;
const delta = { ...epoch, legacyReset: 'delta' } as const;

function lowercased(headers: HeaderList): Record<string, string> {
  return Object.fromEntries(headers.map(([name, value]) => [name.toLowerCase(), value]));
}

describe('legacy X-RateLimit-* headers', () => {
  describe('in express-rate-limit style (epoch reset, the default)', () => {
    it('sends limit, remaining and the reset epoch second on the first request (limit 5 per 60 s)', () => {
      const hit = timeline({ limit: 5, windowMs: 60_000 });
      expect(rateLimitHeaders(hit(), epoch)).toEqual([
        ['X-RateLimit-Limit', '5'],
        ['X-RateLimit-Remaining', '4'],
        ['X-RateLimit-Reset', '1795262460'],
      ]);
    });

    it('keeps the same absolute reset as time passes, and adds Retry-After on the 429 (limit 2 per 60 s, 3rd request)', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 });
      hit();
      expect(rateLimitHeaders(hit(10_500), epoch)).toEqual([
        ['X-RateLimit-Limit', '2'],
        ['X-RateLimit-Remaining', '0'],
        ['X-RateLimit-Reset', '1795262460'],
      ]);
      const refused = hit(10_500);
      expect(refused.allowed).toBe(false);
      expect(rateLimitHeaders(refused, epoch)).toEqual([
        ['X-RateLimit-Limit', '2'],
        ['X-RateLimit-Remaining', '0'],
        ['X-RateLimit-Reset', '1795262460'],
        ['Retry-After', '50'],
      ]);
    });

    it('reports the binding limit of several: the fewest remaining (headers.md §4.3)', () => {
      expect(rateLimitHeaders(workedExample(), epoch)).toEqual([
        ['X-RateLimit-Limit', '100'],
        ['X-RateLimit-Remaining', '5'],
        ['X-RateLimit-Reset', '1795262423'],
      ]);
    });

    it('is read back by ratelimit-header-parser as the same limit, remaining and reset instant', () => {
      expect(parseRateLimit(lowercased(rateLimitHeaders(workedExample(), epoch)))).toEqual({
        limit: 100,
        used: 95,
        remaining: 5,
        reset: new Date(1_795_262_423_000),
      });
    });
  });

  describe('in @fastify/rate-limit style (delta reset)', () => {
    it('sends the seconds until the reset, rounded up', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 });
      expect(rateLimitHeaders(hit(), delta)).toEqual([
        ['X-RateLimit-Limit', '2'],
        ['X-RateLimit-Remaining', '1'],
        ['X-RateLimit-Reset', '60'],
      ]);
      expect(rateLimitHeaders(hit(10_500), delta)).toContainEqual(['X-RateLimit-Reset', '50']);
      const refused = hit(10_500);
      expect(refused.allowed).toBe(false);
      expect(rateLimitHeaders(refused, delta)).toEqual([
        ['X-RateLimit-Limit', '2'],
        ['X-RateLimit-Remaining', '0'],
        ['X-RateLimit-Reset', '50'],
        ['Retry-After', '50'],
      ]);
    });

    it('gives 23 for the worked example (headers.md §4.3)', () => {
      expect(rateLimitHeaders(workedExample(), delta)).toContainEqual(['X-RateLimit-Reset', '23']);
    });

    it('is read back by ratelimit-header-parser as a reset 23 s from now', () => {
      const parsed = parseRateLimit(lowercased(rateLimitHeaders(workedExample(), delta)));
      expect(parsed).toMatchObject({ limit: 100, remaining: 5 });
      expect(Math.abs(parsed!.reset!.getTime() - (Date.now() + 23_000))).toBeLessThanOrEqual(1_000);
    });
  });

  describe('given a request costing more than what is left', () => {
    it('reports what is left, never a negative remaining', () => {
      const hit = timeline({ limit: 5, windowMs: 60_000 });
      hit(0, 3);
      const refused = hit(0, 3);
      expect(refused.allowed).toBe(false);
      expect(lowercased(rateLimitHeaders(refused, epoch))).toMatchObject({ 'x-ratelimit-remaining': '2', 'retry-after': '60' });
    });
  });

  describe('given a bucket with a fractional capacity', () => {
    it('writes whole numbers only', () => {
      const hit = timeline({ algorithm: 'token-bucket', limit: 2.5, windowMs: 1_000 });
      const headers = rateLimitHeaders(hit(), epoch);
      for (const [, value] of headers) expect(value).toMatch(/^\d+$/);
      expect(headers).toContainEqual(['X-RateLimit-Limit', '2']);
      expect(headers).toContainEqual(['X-RateLimit-Remaining', '1']);
    });
  });
});
