import type { HeaderList } from '@ratekit/core';
import type { Response } from 'express';
import { writeHeaders } from './write-headers.js';

/** A response that logs each header write as `[how, name, value]`. */
function written() {
  const log = jest.fn();
  const res = { setHeader: (...header: string[]) => log('set', ...header), append: (...header: string[]) => log('append', ...header) } as unknown as Response;
  return { res, calls: log.mock.calls };
}

const draft8: HeaderList = [
  ['X-RateLimit-Limit', '10'],
  ['RateLimit', '"10-in-1sec"; r=9; t=1'],
  ['RateLimit-Policy', '"10-in-1sec"; q=10; w=1'],
  ['Retry-After', '1'],
];

describe('writeHeaders', () => {
  describe('for draft-8 and later (appendLists)', () => {
    it('appends RateLimit, then RateLimit-Policy (express-rate-limit’s order), and sets every other field in place', () => {
      const { res, calls } = written();
      writeHeaders(res, draft8, true);
      expect(calls).toEqual([
        ['set', 'X-RateLimit-Limit', '10'],
        ['append', 'RateLimit', '"10-in-1sec"; r=9; t=1'],
        ['append', 'RateLimit-Policy', '"10-in-1sec"; q=10; w=1'],
        ['set', 'Retry-After', '1'],
      ]);
    });
  });

  describe('for draft-6, draft-7 and legacy fields', () => {
    it('sets every field, so the last limiter on a route wins', () => {
      const { res, calls } = written();
      writeHeaders(
        res,
        [
          ['RateLimit-Policy', '10;w=1'],
          ['RateLimit', 'limit=10, remaining=9, reset=1'],
        ],
        false,
      );
      expect(calls.map(([how]) => how)).toEqual(['set', 'set']);
    });
  });
});
