import { RateKitOptionError } from '@ratekit/core';
import { describeWithService, postgresService } from '@ratekit/test-utils';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type PostgresQuery, RateLimiterPostgres, type RateLimiterPostgresOptions } from './postgres.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** A table name no other run uses. */
const freshTable = (label: string) => `rlflex_test_${label}_${randomUUID().slice(0, 8)}`;

/** A limiter once its table is ready (the ready callback's error rejects). */
function ready(options: RateLimiterPostgresOptions): Promise<RateLimiterPostgres> {
  return new Promise((resolve, reject) => {
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(options, (error) => (error ? reject(error) : resolve(limiter)));
  });
}

/** A client that records the queries and answers each from `answer`. */
function recordingClient(answer: (q: PostgresQuery) => unknown = () => ({ rows: [], rowCount: 0 })) {
  const queries: PostgresQuery[] = [];
  return { queries, client: { query: (q: PostgresQuery) => (queries.push(q), Promise.resolve(answer(q))) } };
}

describe('RateLimiterPostgres (construction)', () => {
  it("detects storeType from pg's Client and Pool, by constructor name as rlf", () => {
    const client = new pg.Client();
    const pool = new pg.Pool();
    expect(new RateLimiterPostgres({ storeClient: client, points: 1, duration: 1, tableCreated: true, clearExpiredByTimeout: false }).clientType).toBe('client');
    expect(new RateLimiterPostgres({ storeClient: pool, points: 1, duration: 1, tableCreated: true, clearExpiredByTimeout: false }).clientType).toBe('pool');
    void pool.end();
  });

  it("throws rlf's Error('storeType is not defined') for a client it cannot recognise", () => {
    expect(() => new RateLimiterPostgres({ storeClient: {}, points: 1, duration: 1 })).toThrow(new Error('storeType is not defined'));
  });

  it.each([
    ['coalesce', { coalesce: 1 }, /Expected `coalesce` to be a boolean/],
    ['maxBatchSize', { maxBatchSize: 1 }, /Expected `maxBatchSize` to be an integer >= 2/],
    ['batchesInFlight', { batchesInFlight: -1 }, /Expected `batchesInFlight` to be an integer >= 0/],
  ])('refuses a bad %s with a coded option error', (_name, bad, message) => {
    const build = () => new RateLimiterPostgres({ storeClient: recordingClient().client, storeType: 'client', points: 1, duration: 1, tableCreated: true, ...bad } as never);
    expect(build).toThrow(RateKitOptionError);
    expect(build).toThrow(message);
  });

  it('calls the ready callback asynchronously, also with tableCreated (rlf calls it inside the constructor)', async () => {
    let limiter: RateLimiterPostgres | undefined;
    const seen = await new Promise<RateLimiterPostgres | undefined>((resolve) => {
      limiter = new RateLimiterPostgres({ storeClient: recordingClient().client, storeType: 'client', points: 1, duration: 1, tableCreated: true, clearExpiredByTimeout: false }, () =>
        resolve(limiter),
      );
    });
    expect(seen).toBeInstanceOf(RateLimiterPostgres);
  });

  it("names the prepared statements per table (<schema>.<table>:<statement>), with the schema when there is one, and sends rlf's query objects", async () => {
    const { client, queries } = recordingClient((q) => (q.name?.endsWith('ratekit-upsert') ? { rows: [{ points: 1, expire: null, now: 0 }], rowCount: 1 } : { rows: [], rowCount: 0 }));
    const plain = await ready({ storeClient: client, storeType: 'client', tableName: 'Limits', points: 5, duration: 1, clearExpiredByTimeout: false });
    const inSchema = await ready({ storeClient: client, storeType: 'client', tableName: 'Limits', schemaName: 'App', points: 5, duration: 1, clearExpiredByTimeout: false });
    await plain.consume('k');
    await inSchema.get('k');
    await plain.delete('k');
    expect(queries.map((q) => q.name)).toEqual([undefined, undefined, 'limits:ratekit-upsert', 'app.limits:ratekit-get', 'limits:rlflx-delete']);
    expect(queries[0]!.text).toContain('CREATE TABLE IF NOT EXISTS "Limits" (');
    expect(queries[1]!.text).toContain('CREATE TABLE IF NOT EXISTS "App"."Limits" (');
    expect(queries[2]!.values).toEqual(['rlflx:k', 1, 1000]);
  });

  it('reads msBeforeNext on the clock the statement returned; an rlf-shaped row (no now) on the app clock', () => {
    const rl = new RateLimiterPostgres({ storeClient: recordingClient().client, storeType: 'client', points: 5, duration: 1, tableCreated: true, clearExpiredByTimeout: false });
    const serverClock = rl._getRateLimiterRes('k', 1, { rows: [{ points: 3, expire: '10000', now: '4000' }] });
    expect(serverClock.toJSON()).toEqual({ remainingPoints: 2, msBeforeNext: 6_000, consumedPoints: 3, isFirstInDuration: false });
    const appClock = rl._getRateLimiterRes('k', 1, { rows: [{ points: 1, expire: Date.now() + 1_000 }] });
    expect(appClock.msBeforeNext).toBeLessThanOrEqual(1_000);
    expect(appClock.msBeforeNext).toBeGreaterThan(0);
    expect(appClock.isFirstInDuration).toBe(true);
    expect(rl._getRateLimiterRes('k', 1, { rows: [{ points: 2, expire: null, now: '4000' }] }).msBeforeNext).toBe(-1);
  });

  it('starts the sweep only once the table is ready, unref’d', async () => {
    let create: (() => void) | undefined;
    const client = { query: (q: PostgresQuery) => (q.name === undefined ? new Promise((resolve) => (create = () => resolve({ rows: [] }))) : Promise.resolve({ rows: [] })) };
    let limiter: RateLimiterPostgres | undefined;
    const isReady = new Promise<void>((resolve) => {
      limiter = new RateLimiterPostgres({ storeClient: client, storeType: 'client', points: 1, duration: 1 }, () => resolve());
    });
    expect(limiter!._clearExpiredTimeoutId).toBeUndefined();
    await expect(limiter!.consume('k')).rejects.toThrow('Table is not created yet');
    create!();
    await isReady;
    expect(limiter!._clearExpiredTimeoutId?.hasRef()).toBe(false);
    clearTimeout(limiter!._clearExpiredTimeoutId);
  });

  it('a failed creation goes to the callback; every call then rejects with Table is not created yet, caused by it', async () => {
    const failure = Object.assign(new Error('permission denied for schema app'), { code: '42501' });
    const client = { query: () => Promise.reject(failure) };
    let limiter: RateLimiterPostgres | undefined;
    const error = await new Promise<Error | undefined>((resolve) => {
      limiter = new RateLimiterPostgres({ storeClient: client, storeType: 'client', points: 1, duration: 1 }, resolve);
    });
    expect(error).toBe(failure);
    const rejection = await limiter!.consume('k').then(
      () => undefined,
      (reason: unknown) => reason as Error,
    );
    expect(rejection?.message).toBe('Table is not created yet');
    expect(rejection?.cause).toBe(failure);
  });

  it('a failed creation without a callback is a process warning, not an unhandled rejection', async () => {
    const failure = Object.assign(new Error('permission denied'), { code: '42501' });
    let warn: (message: string) => void = () => {};
    const warned = new Promise<string>((resolve) => (warn = resolve));
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => warn(String(warning)));
    try {
      new RateLimiterPostgres({ storeClient: { query: () => Promise.reject(failure) }, storeType: 'client', points: 1, duration: 1, tableName: 'nope' });
      expect(await warned).toBe('RateLimiterPostgres: the table "nope" could not be created: permission denied');
    } finally {
      spy.mockRestore();
    }
  });
});

describeWithService(postgresService, 'RateLimiterPostgres on PostgreSQL', (server) => {
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
  const limiter = (options: Partial<RateLimiterPostgresOptions> = {}) => {
    const tableName = freshTable('rl');
    tables.push(tableName);
    return ready({ storeClient: pool, points: 3, duration: 10, tableName, clearExpiredByTimeout: false, ...options });
  };
  const row = async (rl: RateLimiterPostgres, key: string) => {
    const result = await pool.query<{ points: number; expire: string | null }>(`SELECT points, expire FROM "${rl.tableName}" WHERE key = $1`, [rl.getKey(key)]);
    return result.rows[0];
  };
  const serverNow = async () => Number((await pool.query<{ ms: string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms')).rows[0]!.ms);

  it("creates rlf's table: key varchar(255) primary key, points integer not null default 0, expire bigint", async () => {
    const rl = await limiter();
    const columns = await pool.query<{ column_name: string; data_type: string; character_maximum_length: number | null; is_nullable: string; column_default: string | null }>(
      'SELECT column_name, data_type, character_maximum_length, is_nullable, column_default FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
      [rl.tableName],
    );
    expect(columns.rows).toEqual([
      { column_name: 'key', data_type: 'character varying', character_maximum_length: 255, is_nullable: 'NO', column_default: null },
      { column_name: 'points', data_type: 'integer', character_maximum_length: null, is_nullable: 'NO', column_default: '0' },
      { column_name: 'expire', data_type: 'bigint', character_maximum_length: null, is_nullable: 'YES', column_default: null },
    ]);
    const primary = await pool.query(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = '"${rl.tableName}"'::regclass AND i.indisprimary`,
    );
    expect(primary.rows).toEqual([{ attname: 'key' }]);
  });

  it('a consume writes prefix:key, the points and the window end in epoch ms on the database clock', async () => {
    const rl = await limiter();
    const before = await serverNow();
    const res = await rl.consume('k');
    const after = await serverNow();
    expect(res.toJSON()).toEqual({ remainingPoints: 2, msBeforeNext: 10_000, consumedPoints: 1, isFirstInDuration: true });
    const stored = await row(rl, 'k');
    expect(stored?.points).toBe(1);
    expect(Number(stored?.expire)).toBeGreaterThanOrEqual(before + 10_000);
    expect(Number(stored?.expire)).toBeLessThanOrEqual(after + 10_000);
  });

  it('adds within the window and refuses past points; an ended window restarts', async () => {
    const rl = await limiter();
    await rl.consume('k', 2);
    const refused = await rl.consume('k', 2).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((refused as RateLimiterRes).consumedPoints).toBe(4);
    await pool.query(`UPDATE "${rl.tableName}" SET expire = $2 WHERE key = $1`, [rl.getKey('k'), (await serverNow()) - 1]);
    const restarted = await rl.consume('k');
    expect(restarted.toJSON()).toEqual({ remainingPoints: 2, msBeforeNext: 10_000, consumedPoints: 1, isFirstInDuration: true });
  });

  it('a NULL expire never resets (duration 0, block 0): consumes add to it', async () => {
    const rl = await limiter({ duration: 0 });
    expect((await rl.consume('k')).msBeforeNext).toBe(-1);
    expect((await row(rl, 'k'))?.expire).toBeNull();
    expect((await rl.consume('k')).consumedPoints).toBe(2);
    const timed = await limiter();
    await timed.block('k', 0);
    expect(await row(timed, 'k')).toEqual({ points: 4, expire: null });
    const refused = await timed.consume('k').then(
      () => undefined,
      (reason: unknown) => reason as RateLimiterRes,
    );
    expect(refused?.consumedPoints).toBe(5);
    expect(refused?.msBeforeNext).toBe(-1);
  });

  it('set and block replace points and expiry; get answers the live row or null; delete answers whether it deleted', async () => {
    const rl = await limiter();
    expect(await rl.get('k')).toBeNull();
    await rl.consume('k');
    expect((await rl.set('k', 2, 5)).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 5_000, consumedPoints: 2, isFirstInDuration: false });
    const got = await rl.get('k');
    expect(got?.consumedPoints).toBe(2);
    expect(got?.msBeforeNext).toBeLessThanOrEqual(5_000);
    expect(got?.msBeforeNext).toBeGreaterThan(4_000); // margin: the time this test takes, under a second
    await pool.query(`UPDATE "${rl.tableName}" SET expire = 1 WHERE key = $1`, [rl.getKey('k')]);
    expect(await rl.get('k')).toBeNull();
    expect(await rl.delete('k')).toBe(true);
    expect(await rl.delete('k')).toBe(false);
  });

  it('reward and penalty add negative and positive points; blockDuration rewrites the row once', async () => {
    const rl = await limiter({ blockDuration: 30 });
    await rl.consume('k', 3);
    expect((await rl.reward('k', 2)).consumedPoints).toBe(1);
    expect((await rl.penalty('k', 2)).consumedPoints).toBe(3);
    const refused = await rl.consume('k').then(
      () => undefined,
      (reason: unknown) => reason as RateLimiterRes,
    );
    expect(refused?.msBeforeNext).toBe(30_000);
    const stored = await row(rl, 'k');
    expect(stored?.points).toBe(4);
    expect(Number(stored?.expire) - (await serverNow())).toBeGreaterThan(29_000);
  });

  it('clearExpired(expire) deletes the rows that ended before it', async () => {
    const rl = await limiter();
    await rl.consume('old');
    await rl.consume('live');
    await pool.query(`UPDATE "${rl.tableName}" SET expire = 1000 WHERE key = $1`, [rl.getKey('old')]);
    await rl.clearExpired(2000);
    const keys = await pool.query<{ key: string }>(`SELECT key FROM "${rl.tableName}" ORDER BY key`);
    expect(keys.rows.map((r) => r.key)).toEqual([rl.getKey('live')]);
  });

  it('a table or schema name with a double quote names that table (rlf would send broken SQL)', async () => {
    const tableName = `${freshTable('q')}"x`;
    const rl = await ready({ storeClient: pool, points: 3, duration: 10, tableName, clearExpiredByTimeout: false });
    try {
      expect((await rl.consume('k')).consumedPoints).toBe(1);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS "${tableName.replace(/"/g, '""')}"`);
    }
  });

  it('works on a pg Client as on a Pool', async () => {
    const client = new pg.Client({ connectionString: server().url });
    await client.connect();
    try {
      const tableName = freshTable('client');
      tables.push(tableName);
      const rl = await ready({ storeClient: client, points: 3, duration: 10, tableName, clearExpiredByTimeout: false });
      expect(rl.clientType).toBe('client');
      expect((await Promise.all([rl.consume('k'), rl.consume('k')])).map((r) => r.consumedPoints)).toEqual([1, 2]);
    } finally {
      await client.end();
    }
  });
});
