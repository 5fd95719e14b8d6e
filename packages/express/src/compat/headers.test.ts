import type { Response } from 'express';
import { type CountedState, counterRetryAfter, writeLegacyCounterHeaders, writeStandardCounterHeaders } from './headers.js';

/** Records how each header was written. */
function recorder() {
  const calls: Array<[how: 'set' | 'append', name: string, value: string]> = [];
  const res = {
    setHeader: (name: string, value: string) => calls.push(['set', name, value]),
    append: (name: string, value: string) => calls.push(['append', name, value]),
  } as unknown as Response;
  return { res, calls };
}

/** Sat, 21 Nov 2026 12:00:00 GMT. */
const T0 = 1_795_262_400_000;

describe('the express-rate-limit mode headers', () => {
  // 100 per 15 minutes, first request: 99 left, the window ends in 900 s.
  const first: CountedState = { limit: 100, remaining: 99, resetTime: new Date(T0 + 900_000), key: '127.0.0.1' };

  describe('writeLegacyCounterHeaders', () => {
    it('sets X-RateLimit-Limit, -Remaining, Date and -Reset (epoch seconds, rounded up)', () => {
      const { res, calls } = recorder();
      writeLegacyCounterHeaders(res, { ...first, resetTime: new Date(T0 + 899_001) }, T0);
      expect(calls).toEqual([
        ['set', 'X-RateLimit-Limit', '100'],
        ['set', 'X-RateLimit-Remaining', '99'],
        ['set', 'Date', 'Sat, 21 Nov 2026 12:00:00 GMT'],
        ['set', 'X-RateLimit-Reset', '1795263300'],
      ]);
    });

    it.each([
      ['the same second, later', T0 + 999, 'Sat, 21 Nov 2026 12:00:00 GMT'],
      ['the next second', T0 + 1_000, 'Sat, 21 Nov 2026 12:00:01 GMT'],
      ['an earlier second', T0 - 1, 'Sat, 21 Nov 2026 11:59:59 GMT'],
    ])('sets Date to the clock of each response, whole seconds (%s)', (_when, nowMs, date) => {
      writeLegacyCounterHeaders(recorder().res, first, T0);
      const { res, calls } = recorder();
      writeLegacyCounterHeaders(res, first, nowMs);
      expect(calls).toContainEqual(['set', 'Date', date]);
    });

    it('leaves Date and X-RateLimit-Reset out when the store gave no reset time', () => {
      const { res, calls } = recorder();
      writeLegacyCounterHeaders(res, { limit: 1, remaining: 0, resetTime: undefined, key: 'k' }, T0);
      expect(calls).toEqual([
        ['set', 'X-RateLimit-Limit', '1'],
        ['set', 'X-RateLimit-Remaining', '0'],
      ]);
    });
  });

  describe('writeStandardCounterHeaders', () => {
    // Each row: draft, state, windowMs, name, and the exact calls.
    const table: Array<[string, 'draft-6' | 'draft-7' | 'draft-8', CountedState, number, string, Array<[string, string, string]>]> = [
      [
        'draft-6',
        'draft-6',
        first,
        900_000,
        '',
        [
          ['set', 'RateLimit-Policy', '100;w=900'],
          ['set', 'RateLimit-Limit', '100'],
          ['set', 'RateLimit-Remaining', '99'],
          ['set', 'RateLimit-Reset', '900'],
        ],
      ],
      [
        'draft-7',
        'draft-7',
        first,
        900_000,
        '',
        [
          ['set', 'RateLimit-Policy', '100;w=900'],
          ['set', 'RateLimit', 'limit=100, remaining=99, reset=900'],
        ],
      ],
      [
        'draft-7 on a refusal, limit 1 per 60 s',
        'draft-7',
        { limit: 1, remaining: 0, resetTime: new Date(T0 + 60_000), key: '127.0.0.1' },
        60_000,
        '',
        [
          ['set', 'RateLimit-Policy', '1;w=60'],
          ['set', 'RateLimit', 'limit=1, remaining=0, reset=60'],
        ],
      ],
      [
        'draft-7 without a reset time: the whole window',
        'draft-7',
        { limit: 1, remaining: 0, resetTime: undefined, key: 'k' },
        60_000,
        '',
        [
          ['set', 'RateLimit-Policy', '1;w=60'],
          ['set', 'RateLimit', 'limit=1, remaining=0, reset=60'],
        ],
      ],
      [
        'draft-8 with the default name and the hashed key',
        'draft-8',
        first,
        900_000,
        '100-in-15min',
        [
          ['append', 'RateLimit', '"100-in-15min"; r=99; t=900'],
          ['append', 'RateLimit-Policy', '"100-in-15min"; q=100; w=900; pk=:MTJjYTE3YjQ5YWYy:'],
        ],
      ],
      [
        'draft-8, key foo, a 90 s window',
        'draft-8',
        { limit: 7, remaining: 6, resetTime: new Date(T0 + 90_000), key: 'foo' },
        90_000,
        '7-in-1.5min',
        [
          ['append', 'RateLimit', '"7-in-1.5min"; r=6; t=90'],
          ['append', 'RateLimit-Policy', '"7-in-1.5min"; q=7; w=90; pk=:MmMyNmI0NmI2OGZm:'],
        ],
      ],
      [
        'draft-8 with a quote in the name (escaped, so the field parses)',
        'draft-8',
        { limit: 1, remaining: 0, resetTime: new Date(T0 + 1_000), key: 'k' },
        1_000,
        'a"b',
        [
          ['append', 'RateLimit', '"a\\"b"; r=0; t=1'],
          ['append', 'RateLimit-Policy', '"a\\"b"; q=1; w=1; pk=:ODI1NGMzMjlhOTI4:'],
        ],
      ],
    ];

    it.each(table)('%s', (_situation, draft, state, windowMs, name, expected) => {
      const { res, calls } = recorder();
      writeStandardCounterHeaders(res, draft, state, windowMs, name, T0);
      expect(calls).toEqual(expected);
    });
  });

  describe('counterRetryAfter', () => {
    it.each([
      ['the seconds until the reset time, rounded up', new Date(T0 + 44_001), 45],
      ['the whole window without a reset time', undefined, 60],
      ['at least 1 when the reset time has just passed', new Date(T0 - 5), 1],
    ] as const)('%s', (_situation, resetTime, seconds) => {
      expect(counterRetryAfter({ limit: 1, remaining: 0, resetTime, key: 'k' }, 60_000, T0)).toBe(seconds);
    });
  });
});
