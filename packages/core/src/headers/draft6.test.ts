import { parseRateLimit } from 'ratelimit-header-parser';
import { parseItem, parseList } from 'structured-headers';
import type { Decision } from '../decision';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import { rateLimitHeaders } from './index';
import type { HeaderList } from './options';

/** Sat, 21 Nov 2026 12:00:00 GMT: the instant of the reference examples. */
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

/**
 * headers.md §4.3: "10-in-1sec" and "100-in-1min". `left` 5: the minute has
 * 5 left (resets in 23 s), the second 7 (resets in 1 s). `left` 0: the third
 * request of this second is refused by the minute; the second has 8 left.
 */
function workedExample(left: 5 | 0): Decision {
  const hit = timeline([
    { limit: 10, windowMs: 1_000 },
    { limit: 100, windowMs: 60_000 },
  ]);
  for (let s = 0; s < 9; s++) hit(-37_000 + s * 1_000, 10);
  hit(-28_000, left === 5 ? 2 : 8);
  hit();
  hit();
  return hit();
}

const draft6 = { standardHeaders: 'draft-6', legacyHeaders: false } as const;

function lowercased(headers: HeaderList): Record<string, string> {
  return Object.fromEntries(headers.map(([name, value]) => [name.toLowerCase(), value]));
}

describe('draft-6 headers', () => {
  describe('with one limit (express-rate-limit bytes)', () => {
    it('sends the policy, limit, remaining and reset on the first request (100 per 15 min)', () => {
      const hit = timeline({ limit: 100, windowMs: 15 * 60_000 });
      expect(rateLimitHeaders(hit(), draft6)).toEqual([
        ['RateLimit-Policy', '100;w=900'],
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '99'],
        ['RateLimit-Reset', '900'],
      ]);
    });

    it('sends remaining 0 and a Retry-After equal to the reset on the 429 (2 per 60 s)', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 });
      hit();
      hit();
      expect(rateLimitHeaders(hit(), draft6)).toEqual([
        ['RateLimit-Policy', '2;w=60'],
        ['RateLimit-Limit', '2'],
        ['RateLimit-Remaining', '0'],
        ['RateLimit-Reset', '60'],
        ['Retry-After', '60'],
      ]);
    });
  });

  describe('with several limits (headers.md §4.3)', () => {
    it('lists every limit in the policy and reports the one with the fewest remaining', () => {
      expect(rateLimitHeaders(workedExample(5), draft6)).toEqual([
        ['RateLimit-Policy', '10;w=1, 100;w=60'],
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '5'],
        ['RateLimit-Reset', '23'],
      ]);
    });

    it('reports the refusing limit on a 429, with the reset at the same moment as Retry-After', () => {
      const refused = workedExample(0);
      expect(refused.allowed).toBe(false);
      expect(rateLimitHeaders(refused, draft6)).toEqual([
        ['RateLimit-Policy', '10;w=1, 100;w=60'],
        ['RateLimit-Limit', '100'],
        ['RateLimit-Remaining', '0'],
        ['RateLimit-Reset', '23'],
        ['Retry-After', '23'],
      ]);
    });

    it('breaks a tie on remaining by the later reset', () => {
      const hit = timeline([
        { limit: 5, windowMs: 1_000 },
        { limit: 5, windowMs: 60_000 },
      ]);
      expect(lowercased(rateLimitHeaders(hit(), draft6))).toMatchObject({ 'ratelimit-remaining': '4', 'ratelimit-reset': '60' });
    });

    it('lists a quota once, with its longest window, since the draft forbids two policies with one quota', () => {
      const hit = timeline([
        { limit: 10, windowMs: 1_000 },
        { limit: 100, windowMs: 60_000 },
        { limit: 10, windowMs: 60_000 },
      ]);
      expect(lowercased(rateLimitHeaders(hit(), draft6))['ratelimit-policy']).toBe('100;w=60, 10;w=60');
    });
  });

  describe('given a sub-second window', () => {
    it('rounds the window and the reset up to 1 s', () => {
      const hit = timeline({ limit: 10, windowMs: 500 });
      expect(rateLimitHeaders(hit(), draft6)).toEqual([
        ['RateLimit-Policy', '10;w=1'],
        ['RateLimit-Limit', '10'],
        ['RateLimit-Remaining', '9'],
        ['RateLimit-Reset', '1'],
      ]);
    });
  });

  describe('as seen by clients', () => {
    it('parses as a Structured Fields List and Integers', () => {
      const headers = lowercased(rateLimitHeaders(workedExample(5), draft6));
      expect(parseList(headers['ratelimit-policy']!).map(([value, params]) => [value, Object.fromEntries(params)])).toEqual([
        [10, { w: 1 }],
        [100, { w: 60 }],
      ]);
      for (const field of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
        const [value] = parseItem(headers[field]!);
        expect(Number.isInteger(value)).toBe(true);
      }
    });

    it('is read back by ratelimit-header-parser', () => {
      const parsed = parseRateLimit(lowercased(rateLimitHeaders(workedExample(5), draft6)));
      expect(parsed).toMatchObject({ limit: 100, remaining: 5, used: 95 });
      expect(Math.abs(parsed!.reset!.getTime() - (Date.now() + 23_000))).toBeLessThanOrEqual(1_000);
    });
  });
});
