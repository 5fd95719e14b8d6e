import { parseRateLimit } from 'ratelimit-header-parser';
import { parseDictionary, parseList } from 'structured-headers';
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

/** headers.md §4.3, as in draft6.test.ts: `left` 5 (admitted) or 0 (refused by the minute). */
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

const draft7 = { standardHeaders: 'draft-7', legacyHeaders: false } as const;

function lowercased(headers: HeaderList): Record<string, string> {
  return Object.fromEntries(headers.map(([name, value]) => [name.toLowerCase(), value]));
}

describe('draft-7 headers', () => {
  describe('with one limit (express-rate-limit bytes)', () => {
    it('sends the policy and the combined RateLimit dictionary on the first request (100 per 15 min)', () => {
      const hit = timeline({ limit: 100, windowMs: 15 * 60_000 });
      expect(rateLimitHeaders(hit(), draft7)).toEqual([
        ['RateLimit-Policy', '100;w=900'],
        ['RateLimit', 'limit=100, remaining=99, reset=900'],
      ]);
    });

    it('sends remaining=0 and Retry-After on the 429 (1 per 60 s, 2nd request)', () => {
      const hit = timeline({ limit: 1, windowMs: 60_000 });
      hit();
      expect(rateLimitHeaders(hit(), draft7)).toEqual([
        ['RateLimit-Policy', '1;w=60'],
        ['RateLimit', 'limit=1, remaining=0, reset=60'],
        ['Retry-After', '60'],
      ]);
    });
  });

  describe('with several limits (headers.md §4.3)', () => {
    it('reports the limit with the fewest remaining', () => {
      expect(rateLimitHeaders(workedExample(5), draft7)).toEqual([
        ['RateLimit-Policy', '10;w=1, 100;w=60'],
        ['RateLimit', 'limit=100, remaining=5, reset=23'],
      ]);
    });

    it('reports the refusing limit on a 429', () => {
      expect(rateLimitHeaders(workedExample(0), draft7)).toEqual([
        ['RateLimit-Policy', '10;w=1, 100;w=60'],
        ['RateLimit', 'limit=100, remaining=0, reset=23'],
        ['Retry-After', '23'],
      ]);
    });
  });

  describe('as seen by clients', () => {
    it('parses as a Structured Fields Dictionary of three Integers, members separated by commas', () => {
      const headers = lowercased(rateLimitHeaders(workedExample(5), draft7));
      const dictionary = parseDictionary(headers.ratelimit!);
      expect([...dictionary].map(([key, [value, params]]) => [key, value, params.size])).toEqual([
        ['limit', 100, 0],
        ['remaining', 5, 0],
        ['reset', 23, 0],
      ]);
      expect(parseList(headers['ratelimit-policy']!)).toHaveLength(2);
    });

    it('is read back by ratelimit-header-parser', () => {
      const parsed = parseRateLimit(lowercased(rateLimitHeaders(workedExample(5), draft7)));
      expect(parsed).toMatchObject({ limit: 100, remaining: 5, used: 95 });
      expect(Math.abs(parsed!.reset!.getTime() - (Date.now() + 23_000))).toBeLessThanOrEqual(1_000);
    });
  });
});
