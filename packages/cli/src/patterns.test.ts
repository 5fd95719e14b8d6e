import { boundary, burst, fromCsv, sawtooth, steady } from './patterns.js';
import { CliError } from './errors.js';

const times = (traffic: { events: readonly { t: number }[] }) => traffic.events.map((event) => event.t);

describe('steady', () => {
  test('rate per second, evenly spaced from 0, below the duration', () => {
    expect(times(steady({ rate: 4, durationMs: 1000 }))).toEqual([0, 250, 500, 750]);
  });

  test('times are rounded to whole ms: 3/s is 0, 333, 667', () => {
    expect(times(steady({ rate: 3, durationMs: 1000 }))).toEqual([0, 333, 667]);
  });

  test('one key, cost 1; drawn over the duration from 0', () => {
    const traffic = steady({ rate: 2, durationMs: 1000 });
    expect(traffic.events).toEqual([
      { t: 0, key: 'client', cost: 1 },
      { t: 500, key: 'client', cost: 1 },
    ]);
    expect(traffic).toMatchObject({ startMs: 0, durationMs: 1000, description: 'steady: 2/s for 1000 ms' });
  });
});

describe('burst then steady', () => {
  test('the burst at 0, then the rate from one interval on', () => {
    expect(times(burst({ burst: 3, rate: 4, durationMs: 1000 }))).toEqual([0, 0, 0, 250, 500, 750]);
  });
});

describe('sawtooth', () => {
  test('each period ramps from 0 to the peak: round(peak × period / 2000) requests at floor(sqrt(2000 × period × (k − ½) / peak))', () => {
    // 10/s peak over 1000 ms: 5 requests, at sqrt(200000 × (k − ½)) = 316, 547, 707, 836, 948 ms.
    expect(times(sawtooth({ peak: 10, periodMs: 1000, durationMs: 2000 }))).toEqual([316, 547, 707, 836, 948, 1316, 1547, 1707, 1836, 1948]);
  });

  test('requests at or after the duration are cut, also mid-period', () => {
    expect(times(sawtooth({ peak: 10, periodMs: 1000, durationMs: 1600 }))).toEqual([316, 547, 707, 836, 948, 1316, 1547]);
  });
});

describe('boundary attack', () => {
  test('one request opens the window at 0, then limit requests gap ms before its end and limit at its end', () => {
    const traffic = boundary({ limit: 3, windowMs: 1000, gapMs: 1 });
    expect(times(traffic)).toEqual([0, 999, 999, 999, 1000, 1000, 1000]);
    expect(traffic.durationMs).toBe(2000);
  });
});

describe('CSV', () => {
  test('timestamp only: key client, cost 1; sorted by time, ties kept in file order; the chart starts at the first timestamp', () => {
    const traffic = fromCsv('1700000000500\n1700000000000\n1700000000000\n', 'a.csv', 1000);
    expect(traffic.events).toEqual([
      { t: 1700000000000, key: 'client', cost: 1 },
      { t: 1700000000000, key: 'client', cost: 1 },
      { t: 1700000000500, key: 'client', cost: 1 },
    ]);
    expect(traffic.startMs).toBe(1700000000000);
    expect(traffic.durationMs).toBe(1500);
  });

  test('timestamp,key,cost without a header; blank lines and # comments skipped; an empty cost is 1', () => {
    const traffic = fromCsv('# t,key,cost\n0,alice,2\n\n10,bob,\n20,alice,0.5\n', 'a.csv', 100);
    expect(traffic.events).toEqual([
      { t: 0, key: 'alice', cost: 2 },
      { t: 10, key: 'bob', cost: 1 },
      { t: 20, key: 'alice', cost: 0.5 },
    ]);
  });

  test('a header names the columns, in any order', () => {
    const traffic = fromCsv('key,cost,timestamp\nalice,3,100\nbob,1,50\n', 'a.csv', 100);
    expect(traffic.events).toEqual([
      { t: 50, key: 'bob', cost: 1 },
      { t: 100, key: 'alice', cost: 3 },
    ]);
    expect(fromCsv('ms\n5\n', 'a.csv', 1).events).toEqual([{ t: 5, key: 'client', cost: 1 }]);
  });

  test('a bad row is a coded error naming the file, line and column', () => {
    const error = catchError(() => fromCsv('0\nsoon\n', 'traffic.csv', 100));
    expect(error).toMatchObject({ code: 'ERR_RATEKIT_CLI_CSV', argument: 'traffic.csv:2 timestamp', expected: 'a finite number of ms', received: 'soon' });
    expect(error.message).toBe('[ratekit] Expected `traffic.csv:2 timestamp` to be a finite number of ms, got "soon"');
    expect(catchError(() => fromCsv('0,a,-1\n', 'traffic.csv', 100))).toMatchObject({ code: 'ERR_RATEKIT_CLI_CSV', argument: 'traffic.csv:1 cost', received: '-1' });
    expect(catchError(() => fromCsv('when,key\n1,a\n', 'traffic.csv', 100))).toMatchObject({ code: 'ERR_RATEKIT_CLI_CSV', argument: 'traffic.csv:1' });
    expect(catchError(() => fromCsv('# nothing\n', 'traffic.csv', 100))).toMatchObject({ code: 'ERR_RATEKIT_CLI_CSV', argument: 'traffic.csv' });
  });
});

function catchError(fn: () => unknown): CliError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected an error');
}
