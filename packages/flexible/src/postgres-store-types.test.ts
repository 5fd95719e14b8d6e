import { describeWithService, postgresService } from '@ratekit/test-utils';
import knex, { type Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Sequelize } from 'sequelize';
import { DataSource } from 'typeorm';
import { RateLimiterPostgres } from './postgres.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/**
 * rlf's other `storeType` values, each on its library over `pg`, against the
 * real PostgreSQL: Sequelize (its connection manager), Knex (its client's
 * pool) and TypeORM (its driver's pg Pool). Each pool holds one connection,
 * so a connection the limiter did not give back would hang the next call.
 */
describeWithService(postgresService, 'RateLimiterPostgres on Sequelize, Knex and TypeORM', (server) => {
  let admin: pg.Pool;
  const tables: string[] = [];
  beforeAll(() => {
    admin = new pg.Pool({ connectionString: server().url, max: 1 });
    admin.on('error', () => {});
  });
  afterAll(async () => {
    for (const table of tables) await admin.query(`DROP TABLE IF EXISTS "${table}"`);
    await admin.end();
  });

  /** Builds the limiter on `storeClient`, waits for its table, and runs rlf's calls on it, checking the rows. */
  async function exercise(storeClient: unknown, storeType: string | undefined, expectedType: string) {
    const tableName = `rlflex_types_${randomUUID().slice(0, 8)}`;
    tables.push(tableName);
    const rl = await new Promise<RateLimiterPostgres>((resolve, reject) => {
      const created: RateLimiterPostgres = new RateLimiterPostgres({ storeClient, storeType, points: 2, duration: 60, tableName, clearExpiredByTimeout: false }, (error) =>
        error ? reject(error) : resolve(created),
      );
    });
    expect(rl.clientType).toBe(expectedType);
    expect((await rl.consume('k')).consumedPoints).toBe(1);
    expect((await Promise.all([rl.consume('k'), rl.penalty('j')])).map((r) => r.consumedPoints)).toEqual([2, 1]);
    const refused = await rl.consume('k').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((await rl.get('k'))?.consumedPoints).toBe(3);
    await rl.block('j', 30);
    expect(await rl.delete('k')).toBe(true);
    expect(await rl.get('k')).toBeNull();
    const rows = await admin.query<{ key: string; points: number }>(`SELECT key, points FROM "${tableName}" ORDER BY key`);
    expect(rows.rows).toEqual([{ key: 'rlflx:j', points: 3 }]);
  }

  it('Sequelize (detected by its constructor name): a connection from its connection manager per query, given back', async () => {
    const sequelize = new Sequelize(server().url, { dialect: 'postgres', dialectModule: pg, logging: false, pool: { max: 1, min: 0, acquire: 5_000 } });
    try {
      await exercise(sequelize, undefined, 'sequelize');
    } finally {
      await sequelize.close();
    }
  });

  it("Knex (storeType 'knex'): a connection from its client's pool per query, given back", async () => {
    const client: Knex = knex({ client: 'pg', connection: server().url, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 5_000 });
    try {
      await exercise(client, 'knex', 'knex');
    } finally {
      await client.destroy();
    }
  });

  it("TypeORM (storeType 'typeorm'): its driver's pg Pool", async () => {
    const dataSource = new DataSource({ type: 'postgres', url: server().url, driver: pg, poolSize: 1, logging: false });
    await dataSource.initialize();
    try {
      await exercise(dataSource, 'typeorm', 'typeorm');
    } finally {
      await dataSource.destroy();
    }
  });
});
