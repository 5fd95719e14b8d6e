import { type Item, parseList } from 'structured-headers';
import type { Decision } from '../decision';
import { RateKitOptionError } from '../errors';
import { createLimiter, type LimitsOption } from '../limiter';
import { memoryStore } from '../stores/memory';
import { type HeaderOptions, rateLimitHeaders } from './index';
import type { HeaderList } from './options';

/** Sat, 21 Nov 2026 12:00:00 GMT: the instant of the reference examples. */
const T0 = 1_795_262_400_000;

/** A limiter on a fixed clock: `hit(atMs, cost)` consumes for `key` at T0 + atMs. */
function timeline(limits: LimitsOption<unknown>, key = '127.0.0.1') {
  let now = T0;
  const limiter = createLimiter({ limits, store: memoryStore({ maxKeys: 16, pruneIntervalMs: 0 }), now: () => now });
  return (atMs = 0, cost = 1): Decision => {
    now = T0 + atMs;
    return limiter.consume(key, { cost }) as Decision;
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

const draft8: HeaderOptions = { standardHeaders: 'draft-8', legacyHeaders: false };
const canonical: HeaderOptions = { ...draft8, style: 'canonical', combineLists: true };

/** The field's lines joined as HTTP joins repeated field lines, then parsed strictly (RFC 9651). */
function parsed(headers: HeaderList, name: string): Array<[string, Record<string, unknown>]> {
  const joined = headers
    .filter(([n]) => n === name)
    .map(([, value]) => value)
    .join(', ');
  return parseList(joined).map((member) => {
    const [value, params] = member as Item;
    return [value as string, Object.fromEntries(params)];
  });
}

/** The drafts' semantic checks (headers.md §8): names are unique Strings, values Integers in range, every item has a policy. */
function expectValidDraft8(headers: HeaderList): void {
  const policies = parsed(headers, 'RateLimit-Policy');
  const limits = parsed(headers, 'RateLimit');
  const isCount = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  expect(new Set(policies.map(([name]) => name)).size).toBe(policies.length);
  for (const [name, params] of policies) {
    expect(typeof name).toBe('string');
    expect(isCount(params.q)).toBe(true);
    expect(Number.isInteger(params.w) && (params.w as number) >= 1).toBe(true);
  }
  for (const [name, params] of limits) {
    expect(policies.map(([n]) => n)).toContain(name);
    expect(isCount(params.r)).toBe(true);
    expect(isCount(params.t)).toBe(true);
  }
}

describe('draft-8 headers', () => {
  describe('with one limit (express-rate-limit bytes)', () => {
    it('sends the policy with the hashed partition key, then the limit (100 per 15 min, key 127.0.0.1)', () => {
      const hit = timeline({ limit: 100, windowMs: 15 * 60_000 });
      expect(rateLimitHeaders(hit(), { ...draft8, partitionKey: '127.0.0.1' })).toEqual([
        ['RateLimit', '"100-in-15min"; r=99; t=900'],
        ['RateLimit-Policy', '"100-in-15min"; q=100; w=900; pk=:MTJjYTE3YjQ5YWYy:'],
      ]);
    });

    it('hashes key foo to MmMyNmI0NmI2OGZm', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 }, 'foo');
      expect(rateLimitHeaders(hit(), { ...draft8, partitionKey: 'foo' })).toContainEqual(['RateLimit-Policy', '"2-in-1min"; q=2; w=60; pk=:MmMyNmI0NmI2OGZm:']);
    });

    it('leaves pk out without a partition key', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 });
      expect(rateLimitHeaders(hit(), draft8)).toEqual([
        ['RateLimit', '"2-in-1min"; r=1; t=60'],
        ['RateLimit-Policy', '"2-in-1min"; q=2; w=60'],
      ]);
    });

    it('sends r=0 and Retry-After equal to t on the 429 (2 per 60 s, 3rd request)', () => {
      const hit = timeline({ limit: 2, windowMs: 60_000 });
      hit();
      hit();
      expect(rateLimitHeaders(hit(), { ...draft8, partitionKey: '127.0.0.1' })).toEqual([
        ['RateLimit', '"2-in-1min"; r=0; t=60'],
        ['RateLimit-Policy', '"2-in-1min"; q=2; w=60; pk=:MTJjYTE3YjQ5YWYy:'],
        ['Retry-After', '60'],
      ]);
    });

    it('names 7 per 90 s "7-in-1.5min" with w=90', () => {
      const hit = timeline({ limit: 7, windowMs: 90_000 });
      expect(rateLimitHeaders(hit(), draft8).find(([name]) => name === 'RateLimit-Policy')).toEqual(['RateLimit-Policy', '"7-in-1.5min"; q=7; w=90']);
    });
  });

  describe('with several limits', () => {
    it('sends one member per limit, in policy order, as two stacked express-rate-limit limiters would (10 per 1 s, "burst" 500 per 90 min)', () => {
      const hit = timeline([
        { limit: 10, windowMs: 1_000 },
        { limit: 500, windowMs: 90 * 60_000, name: 'burst' },
      ]);
      expect(rateLimitHeaders(hit(), { ...draft8, partitionKey: '127.0.0.1' })).toEqual([
        ['RateLimit', '"10-in-1sec"; r=9; t=1'],
        ['RateLimit', '"burst"; r=499; t=5400'],
        ['RateLimit-Policy', '"10-in-1sec"; q=10; w=1; pk=:MTJjYTE3YjQ5YWYy:'],
        ['RateLimit-Policy', '"burst"; q=500; w=5400; pk=:MTJjYTE3YjQ5YWYy:'],
      ]);
    });

    it('gives the worked example of headers.md §4.3 byte for byte in canonical style', () => {
      expect(rateLimitHeaders(workedExample(5), canonical)).toEqual([
        ['RateLimit', '"10-in-1sec";r=7;t=1, "100-in-1min";r=5;t=23'],
        ['RateLimit-Policy', '"10-in-1sec";q=10;w=1, "100-in-1min";q=100;w=60'],
      ]);
    });

    it('gives the 429 of headers.md §4.3: the exhausted limit r=0 with t equal to Retry-After, the other as it stands', () => {
      expect(rateLimitHeaders(workedExample(0), canonical)).toEqual([
        ['RateLimit', '"10-in-1sec";r=8;t=1, "100-in-1min";r=0;t=23'],
        ['RateLimit-Policy', '"10-in-1sec";q=10;w=1, "100-in-1min";q=100;w=60'],
        ['Retry-After', '23'],
      ]);
    });

    it('joins members with a partition key into one value per field with combineLists', () => {
      expect(rateLimitHeaders(workedExample(5), { ...draft8, combineLists: true, partitionKey: 'foo' })).toEqual([
        ['RateLimit', '"10-in-1sec"; r=7; t=1, "100-in-1min"; r=5; t=23'],
        ['RateLimit-Policy', '"10-in-1sec"; q=10; w=1; pk=:MmMyNmI0NmI2OGZm:, "100-in-1min"; q=100; w=60; pk=:MmMyNmI0NmI2OGZm:'],
      ]);
    });

    it('reads the same whether the lines are separate or joined, in either style', () => {
      const decision = workedExample(0);
      const variants: HeaderOptions[] = [draft8, { ...draft8, combineLists: true }, { ...draft8, style: 'canonical' }, canonical, { ...canonical, partitionKey: 'foo' }];
      const [first, ...rest] = variants.map((options) => {
        const headers = rateLimitHeaders(decision, options);
        expectValidDraft8(headers);
        return parsed(headers, 'RateLimit');
      });
      for (const other of rest) expect(other).toEqual(first);
      expect(first).toEqual([
        ['10-in-1sec', { r: 8, t: 1 }],
        ['100-in-1min', { r: 0, t: 23 }],
      ]);
    });
  });

  describe.each(['draft-9', 'draft-10', 'draft-11'] as const)('as %s', (draft) => {
    it('sends the same bytes as draft-8 (the wire syntax did not change)', () => {
      const decision = workedExample(0);
      expect(rateLimitHeaders(decision, { ...draft8, standardHeaders: draft, partitionKey: 'x' })).toEqual(rateLimitHeaders(decision, { ...draft8, partitionKey: 'x' }));
    });
  });

  describe('given names and values at the edges', () => {
    it('escapes quotes and backslashes in a policy name, and a parser reads the name back', () => {
      const hit = timeline({ limit: 3, windowMs: 60_000, name: 'say "hi" \\o/' });
      const headers = rateLimitHeaders(hit(), draft8);
      expect(headers.find(([name]) => name === 'RateLimit-Policy')).toEqual(['RateLimit-Policy', '"say \\"hi\\" \\\\o/"; q=3; w=60']);
      expect(parsed(headers, 'RateLimit')).toEqual([['say "hi" \\o/', { r: 2, t: 60 }]]);
    });

    it('refuses to build a limit whose name is not printable ASCII', () => {
      expect(() => createLimiter({ limits: { limit: 3, windowMs: 60_000, name: 'café' } })).toThrow(RateKitOptionError);
    });

    it('throws a coded error, rather than send an unparseable field, for a hand-built decision with a non-ASCII name', () => {
      const decision = timeline({ limit: 3, windowMs: 60_000, name: 'plain' })();
      const tampered: Decision = { ...decision, limits: decision.limits.map((l) => ({ ...l, name: 'naïve' })) };
      expect(() => rateLimitHeaders(tampered, draft8)).toThrow(RateKitOptionError);
    });

    it('rounds a sub-second window up to w=1 (the drafts forbid w=0)', () => {
      const headers = rateLimitHeaders(timeline({ limit: 10, windowMs: 500 })(), draft8);
      expect(headers).toEqual([
        ['RateLimit', '"10-in-0.5sec"; r=9; t=1'],
        ['RateLimit-Policy', '"10-in-0.5sec"; q=10; w=1'],
      ]);
      expectValidDraft8(headers);
    });

    it('writes a day-long window as w=86400', () => {
      const headers = rateLimitHeaders(timeline({ limit: 1000, windowMs: 86_400_000 })(), draft8);
      expect(headers.find(([name]) => name === 'RateLimit-Policy')).toEqual(['RateLimit-Policy', '"1000-in-1day"; q=1000; w=86400']);
      expectValidDraft8(headers);
    });

    it('writes a fractional quota as the whole number below it, so q stays an Integer', () => {
      const hit = timeline({ algorithm: 'token-bucket', limit: 2.5, windowMs: 1_000 });
      const headers = rateLimitHeaders(hit(), draft8);
      expect(headers).toEqual([
        ['RateLimit', '"2.5-in-1sec"; r=1; t=1'],
        ['RateLimit-Policy', '"2.5-in-1sec"; q=2; w=1'],
      ]);
      expectValidDraft8(headers);
    });
  });
});
