import { describeWithService, postgresService } from '@ratekit/test-utils';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { foldBatch, unfoldPoints } from './postgres-coalesce.js';
import { type PostgresQuery, type PostgresResult, RateLimiterPostgres } from './postgres.js';
import { RateLimiterRes } from './rate-limiter-res.js';

describe('foldBatch: a batch of adds, folded per key', () => {
  it('sums each key’s points, keeps its first add’s duration, sorts the keys, and tells each add the points after it', () => {
    const folded = foldBatch([
      { key: 'b', points: 1, msDuration: 1000 },
      { key: 'a', points: 2, msDuration: 5000 },
      { key: 'b', points: -3, msDuration: 9000 },
      { key: 'b', points: 4, msDuration: 0 },
    ]);
    expect(folded.keys).toEqual(['a', 'b']);
    expect(folded.points).toEqual([2, 2]);
    expect(folded.msDurations).toEqual([5000, 1000]);
    expect(folded.answers).toEqual([
      { row: 1, after: 1 },
      { row: 0, after: 0 },
      { row: 1, after: 4 },
      { row: 1, after: 0 },
    ]);
  });

  it('recovers what each add saw, as if they ran one after another: a row at 10 after b +1, b -3, b +4 saw 6, 3, 7... ', () => {
    // The row started at 5: the adds saw 6, 3, 7; the statement returns 7.
    const folded = foldBatch([
      { key: 'b', points: 1, msDuration: 1000 },
      { key: 'b', points: -3, msDuration: 1000 },
      { key: 'b', points: 4, msDuration: 1000 },
    ]);
    expect(folded.answers.map((a) => unfoldPoints(7, a.after))).toEqual([6, 3, 7]);
  });
});

/** One call of a schedule. */
type Op =
  | { kind: 'consume' | 'penalty' | 'reward'; key: number; points: number }
  | { kind: 'get' | 'delete'; key: number }
  | { kind: 'set'; key: number; points: number; sec: number }
  | { kind: 'block'; key: number; sec: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('consume' as const, 'penalty' as const, 'reward' as const), key: fc.nat(2), points: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('get' as const, 'delete' as const), key: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('set' as const), key: fc.nat(2), points: fc.integer({ min: 0, max: 6 }), sec: fc.constantFrom(0, 30, 90) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), key: fc.nat(2), sec: fc.constantFrom(0, 30, 90) }) },
);

/** What a call answered: a result, a refusal, `null` (get), a boolean (delete). */
type Outcome = { refused: boolean; res: { remainingPoints: number; msBeforeNext: number; consumedPoints: number; isFirstInDuration: boolean } | null } | boolean;

function run(limiter: RateLimiterPostgres, op: Op): Promise<Outcome> {
  const key = `k${op.key}`;
  let call: Promise<RateLimiterRes | null | boolean>;
  switch (op.kind) {
    case 'consume':
    case 'penalty':
    case 'reward':
      call = limiter[op.kind](key, op.points);
      break;
    case 'get':
      call = limiter.get(key);
      break;
    case 'delete':
      call = limiter.delete(key);
      break;
    case 'set':
      call = limiter.set(key, op.points, op.sec);
      break;
    case 'block':
      call = limiter.block(key, op.sec);
      break;
  }
  return call.then(
    (value) => (typeof value === 'boolean' ? value : { refused: false, res: value === null ? null : value.toJSON() }),
    (reason: unknown) => {
      if (reason instanceof RateLimiterRes) return { refused: true, res: reason.toJSON() };
      throw reason;
    },
  );
}

/**
 * The differential: msBeforeNext of the two runs differ by the time between
 * their calls (each run reads the database clock when it runs): this margin
 * bounds it on a loaded machine; every other field must be equal.
 */
const MS_MARGIN = 5_000;

describeWithService(postgresService, 'RateLimiterPostgres coalescing against PostgreSQL', (server) => {
  let pool: pg.Pool;
  const tables: string[] = [];
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: server().url, max: 4 });
    pool.on('error', () => {});
  });
  afterAll(async () => {
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  });

  /** A limiter on a fresh table; `sent` records each statement's name (after the table's creation). */
  const limiter = async (options: Record<string, unknown>) => {
    const tableName = `rlflex_coalesce_${randomUUID().slice(0, 8)}`;
    tables.push(tableName);
    const sent: string[] = [];
    const recording = {
      query: (q: PostgresQuery) => {
        if (q.name !== undefined) sent.push(q.name.slice(q.name.indexOf(':') + 1));
        return pool.query(q) as unknown as Promise<PostgresResult>;
      },
    };
    const rl = await new Promise<RateLimiterPostgres>((resolve, reject) => {
      const created: RateLimiterPostgres = new RateLimiterPostgres(
        { storeClient: recording, storeType: 'pool', points: 5, duration: 60, tableName, clearExpiredByTimeout: false, ...options },
        (error) => (error ? reject(error) : resolve(created)),
      );
    });
    return { rl, sent };
  };

  it('sends the first add of an iteration alone and the others as one statement; a get waits for the adds of its key asked before it', async () => {
    const { rl, sent } = await limiter({ batchesInFlight: 0 });
    const answers = await Promise.all([rl.consume('a'), rl.consume('a'), rl.consume('b', 2), rl.reward('a'), rl.get('a'), rl.consume('a')]);
    expect(answers.map((r) => r?.consumedPoints)).toEqual([1, 2, 2, 1, 1, 2]);
    expect(sent).toEqual(['ratekit-upsert', 'ratekit-upsert-batch', 'ratekit-get', 'ratekit-upsert']);
  });

  it('keeps nothing per key once its statements are done (a process that only reads holds no memory for it)', async () => {
    const { rl } = await limiter({});
    await Promise.all(Array.from({ length: 50 }, (_, i) => rl.get(`k${i}`)));
    await Promise.all([rl.consume('a'), rl.consume('a'), rl.delete('b')]);
    await new Promise((resolve) => setImmediate(resolve));
    expect((rl as unknown as { lastByKey: Map<string, unknown> }).lastByKey.size).toBe(0);
  });

  it('with coalesce: false, one statement per call, as rlf', async () => {
    const { rl, sent } = await limiter({ coalesce: false });
    await Promise.all([rl.consume('a'), rl.consume('a'), rl.consume('b')]);
    expect(sent).toEqual(['ratekit-upsert', 'ratekit-upsert', 'ratekit-upsert']);
  });

  it('when the batch fails with a PostgreSQL error, each add runs again alone and fails alone', async () => {
    const { rl, sent } = await limiter({ batchesInFlight: 0 });
    // 3,000,000,000 points overflow the integer column: that add fails; the others count.
    const settled = await Promise.allSettled([rl.consume('a'), rl.consume('a'), rl.penalty('b', 3_000_000_000), rl.consume('c')]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.consumedPoints] : []))).toEqual([1, 2, 1]);
    expect(sent).toEqual(['ratekit-upsert', 'ratekit-upsert-batch', 'ratekit-upsert', 'ratekit-upsert', 'ratekit-upsert']);
  });

  it('never changes an answer: random turns of concurrent calls, coalesced, against the same calls one at a time', async () => {
    const turns = fc.array(fc.array(opArbitrary, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(turns, async (schedule) => {
        const { rl: coalesced } = await limiter({ coalesce: true });
        const { rl: alone } = await limiter({ coalesce: false });
        for (const turn of schedule) {
          const together = await Promise.all(turn.map((op) => run(coalesced, op)));
          const oneByOne: Outcome[] = [];
          for (const op of turn) oneByOne.push(await run(alone, op));
          together.forEach((outcome, i) => {
            const expected = oneByOne[i]!;
            if (typeof outcome === 'boolean' || typeof expected === 'boolean' || outcome.res === null || expected.res === null) {
              expect(outcome).toEqual(expected);
              return;
            }
            const { msBeforeNext, ...counts } = outcome.res;
            const { msBeforeNext: expectedMs, ...expectedCounts } = expected.res;
            expect({ refused: outcome.refused, ...counts }).toEqual({ refused: expected.refused, ...expectedCounts });
            if (expectedMs === -1) expect(msBeforeNext).toBe(-1);
            else expect(Math.abs(msBeforeNext - expectedMs)).toBeLessThanOrEqual(MS_MARGIN);
          });
        }
      }),
      { numRuns: 12 },
    );
  });
});
