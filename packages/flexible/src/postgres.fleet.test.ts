import { describeWithService, postgresService } from '@ratekit/test-utils';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { RateLimiterPostgres as RlfPostgres, RateLimiterRes as RlfRes } from 'rate-limiter-flexible';
import { RateLimiterPostgres } from './postgres.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/**
 * A mixed fleet on one real PostgreSQL: rate-limiter-flexible 11.4's
 * RateLimiterPostgres and ours, alternating calls on the same table and keys,
 * must count as one limiter does. Each scenario runs twice, rlf first and
 * ours first (both directions). Both share one pg Pool, as two limiters of
 * one process migrating would: their prepared statements must not clash.
 * msBeforeNext is checked within MARGIN_MS of the exact value: the time the
 * scenario's own calls take on a loaded machine (rlf reads the app's clock,
 * ours the database's; here they are the same machine's).
 */
const MARGIN_MS = 1_500;

/** What both classes answer (rlf's and ours): the four fields. */
interface Res {
  remainingPoints: number;
  msBeforeNext: number;
  consumedPoints: number;
  isFirstInDuration: boolean;
}

/** The limiter API both share, as the scenarios use it. */
interface Limiter {
  consume(key: string, points?: number): Promise<Res>;
  penalty(key: string, points?: number): Promise<Res>;
  reward(key: string, points?: number): Promise<Res>;
  get(key: string): Promise<Res | null>;
  set(key: string, points: number, secDuration: number): Promise<Res>;
  block(key: string, secDuration: number): Promise<Res>;
  delete(key: string): Promise<boolean>;
}

/** The refusal a call rejects with, checked to be its own library's RateLimiterRes. */
async function refused(call: Promise<unknown>): Promise<Res> {
  const reason = await call.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );
  expect(reason instanceof RateLimiterRes || reason instanceof RlfRes).toBe(true);
  return reason as Res;
}

/** Checks the counts exactly and msBeforeNext in (expected - MARGIN_MS, expected], or -1 exactly. */
function expectRes(res: Res | null, consumedPoints: number, remainingPoints: number, isFirstInDuration: boolean, msBeforeNext: number): void {
  expect(res).not.toBeNull();
  expect({ consumedPoints: res!.consumedPoints, remainingPoints: res!.remainingPoints, isFirstInDuration: res!.isFirstInDuration }).toEqual({
    consumedPoints,
    remainingPoints,
    isFirstInDuration,
  });
  if (msBeforeNext === -1) expect(res!.msBeforeNext).toBe(-1);
  else {
    expect(res!.msBeforeNext).toBeLessThanOrEqual(msBeforeNext);
    expect(res!.msBeforeNext).toBeGreaterThan(msBeforeNext - MARGIN_MS);
  }
}

describeWithService(postgresService, 'a mixed fleet on PostgreSQL: rate-limiter-flexible 11.4 and @ratekit/flexible', (server) => {
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

  /** The two limiters on one table, with the same options, once both have created it (IF NOT EXISTS). */
  const pair = async (options: Record<string, unknown> = {}) => {
    const tableName = `rlflex_fleet_${randomUUID().slice(0, 8)}`;
    tables.push(tableName);
    const common = { storeClient: pool, points: 3, duration: 60, tableName, clearExpiredByTimeout: false, ...options };
    const ours = await new Promise<RateLimiterPostgres>((resolve, reject) => {
      const limiter: RateLimiterPostgres = new RateLimiterPostgres(common, (error) => (error ? reject(error) : resolve(limiter)));
    });
    const rlf = await new Promise<RlfPostgres>((resolve, reject) => {
      const limiter: RlfPostgres = new RlfPostgres(common, (error?: Error) => (error ? reject(error) : resolve(limiter)));
    });
    return { rlf: rlf as unknown as Limiter, ours: ours as unknown as Limiter };
  };
  const directions = [
    [
      'rlf first',
      async (options?: Record<string, unknown>) => {
        const p = await pair(options);
        return [p.rlf, p.ours] as const;
      },
    ],
    [
      'ours first',
      async (options?: Record<string, unknown>) => {
        const p = await pair(options);
        return [p.ours, p.rlf] as const;
      },
    ],
  ] as const;

  describe.each(directions)('%s', (_title, order) => {
    it('consume, penalty, reward and get count as one limiter; the refusal carries the shared count', async () => {
      const [a, b] = await order();
      expectRes(await a.consume('k'), 1, 2, true, 60_000);
      expectRes(await b.consume('k'), 2, 1, false, 60_000);
      expectRes(await a.penalty('k'), 3, 0, false, 60_000);
      expectRes(await b.get('k'), 3, 0, false, 60_000);
      expectRes(await refused(a.consume('k')), 4, 0, false, 60_000);
      expectRes(await refused(b.consume('k', 2)), 6, 0, false, 60_000);
      expectRes(await a.reward('k', 4), 2, 1, false, 60_000);
      expectRes(await b.reward('k', 3), -1, 4, false, 60_000);
      expectRes(await a.consume('k'), 0, 3, false, 60_000);
      expectRes(await b.get('k'), 0, 3, true, 60_000);
    });

    it('block and set by one are obeyed by the other; delete by one is seen by the other', async () => {
      const [a, b] = await order();
      await b.consume('k');
      expectRes(await a.block('k', 30), 4, 0, false, 30_000);
      expectRes(await refused(b.consume('k')), 5, 0, false, 30_000);
      expectRes(await b.set('k', 1, 20), 1, 0, false, 20_000);
      expectRes(await a.consume('k'), 2, 1, false, 20_000);
      expectRes(await b.get('k'), 2, 1, false, 20_000);
      expect(await a.delete('k')).toBe(true);
      expect(await b.get('k')).toBeNull();
      expect(await b.delete('k')).toBe(false);
      expectRes(await b.consume('k'), 1, 2, true, 60_000);
    });

    it('blockDuration: the consume that crosses the limit blocks the key for both', async () => {
      const [a, b] = await order({ blockDuration: 30 });
      await a.consume('k', 3);
      expectRes(await refused(b.consume('k')), 4, 0, false, 30_000);
      expectRes(await refused(a.consume('k')), 5, 0, false, 30_000);
      expectRes(await b.get('k'), 5, 0, false, 30_000);
    });

    it('duration 0 and block 0 never expire, for both (-1, a NULL expire)', async () => {
      const [a, b] = await order({ duration: 0 });
      expectRes(await a.consume('k'), 1, 2, true, -1);
      expectRes(await b.consume('k'), 2, 1, false, -1);
      expectRes(await b.block('j', 0), 4, 0, false, -1);
      expectRes(await refused(a.consume('j')), 5, 0, false, -1);
    });

    it('a window started by one ends for both at the time the first wrote; an ended window restarts for both', async () => {
      const [a, b] = await order({ duration: 20 });
      const first = await a.consume('k');
      expectRes(first, 1, 2, true, 20_000);
      const second = await b.consume('k');
      expectRes(second, 2, 1, false, 20_000);
      expect(second.msBeforeNext).toBeLessThanOrEqual(first.msBeforeNext);
      expect(second.msBeforeNext).toBeGreaterThan(first.msBeforeNext - MARGIN_MS);
      // A window of 1 s started by one; once it has ended (on the database clock), the other restarts it.
      expectRes(await a.set('w', 3, 1), 3, 0, false, 1_000);
      await waitUntilEnded(pool, (a as unknown as { tableName: string }).tableName, 'w');
      expectRes(await b.consume('w'), 1, 2, true, 20_000);
    });
  });
});

/** Waits, polling the database, until the row of `key` has ended on the database clock (and 20 ms more of app clock: rlf reads Date.now()). */
async function waitUntilEnded(pool: pg.Pool, table: string, key: string): Promise<void> {
  for (;;) {
    const result = await pool.query<{ ended: boolean }>(`SELECT expire + 20 <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ended FROM "${table}" WHERE key = $1`, [`rlflx:${key}`]);
    if (result.rows[0]?.ended !== false) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
