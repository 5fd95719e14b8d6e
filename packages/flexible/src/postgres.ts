/**
 * RateLimiterPostgres: rate-limiter-flexible's PostgreSQL limiter
 * (`lib/RateLimiterPostgres.js` of rlf 11.4.0) on `pg`, on rlf's own table
 * (see postgres-statements.ts), so that rlf processes and these share the
 * counts.
 *
 * What is rlf's: the options (`storeClient`, `storeType` and its detection,
 * `tableName` defaulting to `keyPrefix`, `schemaName`, `tableCreated`,
 * `clearExpiredByTimeout`), the `(opts, cb)` ready callback, the
 * `CREATE TABLE IF NOT EXISTS` (a concurrent creation's error 23505 counts as
 * created), the rejection `Table is not created yet` of a call made before
 * the table is ready (#78), prepared statements named per table
 * (`<table>:<statement>`), the pg query objects (`{ name, text, values }`), `_getConnection`/`_releaseConnection` per
 * `storeType`, `clearExpired(expire)`, and the five-minute sweep of rows
 * expired over an hour ago.
 *
 * What differs, on purpose (docs/migrating/rate-limiter-flexible.md):
 * - the statements whose text differs from rlf's (the upserts and the get, on
 *   the database's clock) are named `<table>:ratekit-upsert`,
 *   `:ratekit-upsert-force`, `:ratekit-upsert-batch` and `:ratekit-get`, so
 *   that an rlf limiter and this one can share a `pg` pool in one process
 *   (`pg` refuses one name for two texts on a connection); `:rlflx-delete` and
 *   `:rlflx-clear-expired` are rlf's names for rlf's texts;
 * - the clock is the database's (see postgres-statements.ts), the stored
 *   values are rlf's;
 * - the ready callback is always called asynchronously (rlf calls it inside
 *   the constructor when `tableCreated` is true, before the constructor has
 *   returned the limiter the callback usually uses);
 * - a failed table creation without a callback does not crash the process
 *   with an unhandled rejection: it is emitted as a process warning, and
 *   every call rejects with `Table is not created yet`, the failure as its cause;
 * - the periodic sweep's failures are emitted as process warnings (rlf drops them);
 * - adds are coalesced (`coalesce`, default true; see postgres-coalesce.ts).
 *
 * @module
 */
import { type CoalescingOptions, resolveCoalescing, type TurnCoalescer, turnCoalescer } from '@ratekit/core';
import type { ICallbackReady, IRateLimiterPostgresOptions, RateLimiterCallOptions } from './options.js';
import { foldBatch, type PendingAdd, unfoldPoints } from './postgres-coalesce.js';
import { type PostgresStatements, postgresStatements, statementPrefix, tableIdentifier } from './postgres-statements.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterStoreAbstract } from './store-abstract.js';

/** A query as `pg` takes it (rlf's shape): a named one is prepared once per connection. */
export interface PostgresQuery {
  name?: string;
  text: string;
  values?: unknown[];
}

/** A row of rlf's table as the statements return it. `now` (the database clock, epoch ms) is ratekit's; rlf's rows lack it. */
export interface PostgresRow {
  points: number;
  expire: string | number | null;
  now?: string | number | null;
  key?: string;
}

/** What `pg`'s `query()` resolves with (the part used). */
export interface PostgresResult {
  rows: PostgresRow[];
  rowCount?: number | null;
}

/** A connection or pool: anything with `pg`'s `query(config)`. */
interface Queryable {
  query(query: PostgresQuery): Promise<PostgresResult>;
}

/** The part of Sequelize's connection manager used (v6 `sequelize.connectionManager`, v7 `sequelize.dialect.connectionManager`). */
interface SequelizeConnectionManager {
  getConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): unknown;
}

interface SequelizeLike {
  readonly connectionManager?: SequelizeConnectionManager;
  readonly dialect?: { readonly connectionManager?: SequelizeConnectionManager };
}

/** The part of a Knex instance used: its client's pool of `pg` connections. */
interface KnexLike {
  readonly client: { acquireConnection(): Promise<unknown>; releaseConnection(conn: unknown): unknown };
}

/** The part of a TypeORM DataSource used: its driver's `pg` Pool. */
interface TypeOrmLike {
  readonly driver: { readonly master: unknown };
}

/** Options of {@link RateLimiterPostgres}: rlf's, and ratekit's coalescing. */
export type RateLimiterPostgresOptions = IRateLimiterPostgresOptions & CoalescingOptions;

/** The delay of rlf's sweep, and how long a row stays after its window ended. */
export const CLEAR_EXPIRED_EVERY_MS = 5 * 60_000;
export const CLEAR_EXPIRED_AFTER_MS = 60 * 60_000;

/** An add waiting for its iteration's statement. */
interface WaitingAdd extends PendingAdd {
  readonly resolve: (result: PostgresResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * rate-limiter-flexible's `RateLimiterPostgres`: a fixed window per key in a
 * PostgreSQL table, shared with rlf processes on the same table.
 *
 * Options (rlf's documented ones, {@link IRateLimiterPostgresOptions}):
 * - `storeClient`: a `pg` `Pool` (recommended) or `Client`; a Sequelize
 *   instance, a Knex instance or a TypeORM DataSource over `pg`;
 * - `storeType`: `'client'`, `'pool'`, `'sequelize'`, `'knex'` or `'typeorm'`;
 *   detected for `pg`'s Client and Pool and for Sequelize (by constructor
 *   name, as rlf); required for Knex and TypeORM; another value is treated as
 *   a client with `query()`, as in rlf;
 * - `tableName` (default `keyPrefix`), `schemaName` (optional);
 * - `tableCreated` (default false): true skips the `CREATE TABLE`;
 * - `clearExpiredByTimeout` (default true): every 5 minutes, delete the rows
 *   that ended over an hour ago. The timer starts once the table is ready (at
 *   construction with `tableCreated: true`) and is `unref`'d: it never keeps
 *   the process alive;
 * - `points`, `duration` (seconds; 0 = never resets), `keyPrefix`,
 *   `blockDuration` (seconds), `execEvenly`, `inMemoryBlockOnConsumed`,
 *   `inMemoryBlockDuration`, `insuranceLimiter`: as every rlf limiter;
 * - ratekit's `coalesce` (default true), `maxBatchSize` (default 64, an
 *   integer ≥ 2), `batchesInFlight` (default 2): see postgres-coalesce.ts.
 *
 * The second argument, `cb(err?)`, is called once the table is ready, or with
 * the error that kept it from being; calls made before then reject with
 * `Error('Table is not created yet')`, as in rlf.
 *
 * @throws {Error} `'storeType is not defined'` when `storeType` is missing and the client is not recognised; rlf's other option errors
 * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`) for a bad `coalesce`, `maxBatchSize` or `batchesInFlight`
 * @example
 * ```ts
 * import pg from 'pg';
 * import { RateLimiterPostgres } from '@ratekit/flexible';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const limiter = new RateLimiterPostgres({ storeClient: pool, points: 5, duration: 1, tableName: 'login_limits' }, (err) => {
 *   if (err) throw err; // the table could not be created
 * });
 * ```
 */
export class RateLimiterPostgres extends RateLimiterStoreAbstract {
  _clientType!: string;
  _tableName!: string;
  _schemaName: string | undefined;
  _tableCreated!: boolean;
  _clearExpiredByTimeout!: boolean;
  _clearExpiredTimeoutId: ReturnType<typeof setTimeout> | undefined;
  /** Why the table could not be created, when it could not. */
  private tableError: unknown;
  private readonly coalesce: boolean;
  private readonly turns: TurnCoalescer<WaitingAdd>;
  /** Per key, when its last statement sent is done (settled); a key is forgotten once its last statement is. */
  private readonly lastByKey = new Map<string, Promise<void>>();
  private statementsOf: { table: string; statements: PostgresStatements } | undefined;

  constructor(opts: RateLimiterPostgresOptions, cb: ICallbackReady | null = null) {
    super(opts);
    this.client = opts.storeClient as unknown;
    this.clientType = opts.storeType;
    this.tableName = opts.tableName;
    this.schemaName = opts.schemaName;
    this.clearExpiredByTimeout = opts.clearExpiredByTimeout;
    this.tableCreated = opts.tableCreated;
    const { coalesce, maxBatchSize, batchesInFlight } = resolveCoalescing(opts);
    this.coalesce = coalesce;
    this.turns = turnCoalescer<WaitingAdd>({
      maxBatchSize,
      batchesInFlight,
      send: (batch) => this.sendInOrder(new Set(batch.map((add) => add.key)), () => this.sendBatch(batch)),
    });

    const ready = (error?: Error) => {
      if (typeof cb === 'function') cb(error);
      else if (error !== undefined)
        process.emitWarning(`RateLimiterPostgres: the table ${this._getTableIdentifier()} could not be created: ${error.message}`, { code: 'RATEKIT_FLEXIBLE_TABLE', detail: String(error.stack) });
    };
    if (!this.tableCreated) {
      this._createTable().then(
        () => {
          this.tableCreated = true;
          if (this.clearExpiredByTimeout) this._clearExpiredHourAgo();
          ready();
        },
        (error: unknown) => {
          this.tableError = error;
          ready(error instanceof Error ? error : new Error(String(error)));
        },
      );
    } else {
      if (this.clearExpiredByTimeout) this._clearExpiredHourAgo();
      queueMicrotask(() => ready());
    }
  }

  /** How the client is reached: `'client'`, `'pool'`, `'sequelize'`, `'knex'`, `'typeorm'` (or any other value, used as a client). */
  get clientType(): string {
    return this._clientType;
  }

  /** @throws {Error} `'storeType is not defined'` when undefined and the client is not a pg Client, Pool or a Sequelize instance (rlf's detection). */
  set clientType(value: string | undefined) {
    let type = value;
    if (type === undefined) {
      const constructorName = (this.client as { constructor?: { name?: string } } | null)?.constructor?.name;
      if (constructorName === 'Client') type = 'client';
      else if (constructorName === 'Pool' || constructorName === 'BoundPool') type = 'pool';
      else if (constructorName === 'Sequelize') type = 'sequelize';
      else throw new Error('storeType is not defined');
    }
    this._clientType = type.toLowerCase();
  }

  /** The table's name; default `keyPrefix`. */
  get tableName(): string {
    return this._tableName;
  }

  set tableName(value: string | undefined) {
    this._tableName = value === undefined ? this.keyPrefix : value;
  }

  get schemaName(): string | undefined {
    return this._schemaName;
  }

  set schemaName(value: string | undefined) {
    this._schemaName = value;
  }

  /** Whether the table is ready; calls reject until it is. */
  get tableCreated(): boolean {
    return this._tableCreated;
  }

  set tableCreated(value: boolean | undefined) {
    this._tableCreated = value === undefined ? false : !!value;
  }

  get clearExpiredByTimeout(): boolean {
    return this._clearExpiredByTimeout;
  }

  set clearExpiredByTimeout(value: boolean | undefined) {
    this._clearExpiredByTimeout = value === undefined ? true : Boolean(value);
  }

  /** The table as SQL names it: `"schema"."table"` or `"table"`. */
  _getTableIdentifier(): string {
    return tableIdentifier(this.tableName, this.schemaName);
  }

  /** The statements of the current table (tableName and schemaName can change at run time, as in rlf). */
  private get statements(): PostgresStatements {
    const table = this._getTableIdentifier();
    if (this.statementsOf?.table !== table) this.statementsOf = { table, statements: postgresStatements(table) };
    return this.statementsOf.statements;
  }

  /** rlf's `CREATE TABLE IF NOT EXISTS`; a concurrent creation (23505) counts as done. */
  _createTable(): Promise<void> {
    return this._query({ text: this.statements.createTable }).then(
      () => undefined,
      (error: unknown) => {
        if ((error as { code?: unknown } | null)?.code === '23505') return undefined;
        throw error;
      },
    );
  }

  /**
   * Deletes the rows whose `expire` is before `expire` (epoch ms). Never
   * rejects, as in rlf (cleaning up is not critical).
   */
  clearExpired(expire: number): Promise<void> {
    return this._query({ name: 'rlflx-clear-expired', text: this.statements.clearExpired, values: [expire] }).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Arms the sweep: in 5 minutes, delete the rows that ended over an hour ago (on the database clock), then again. `unref`'d. */
  _clearExpiredHourAgo(): void {
    if (this._clearExpiredTimeoutId !== undefined) clearTimeout(this._clearExpiredTimeoutId);
    this._clearExpiredTimeoutId = setTimeout(() => {
      this._query({ name: 'ratekit-clear-expired-ago', text: this.statements.clearExpiredAgo, values: [CLEAR_EXPIRED_AFTER_MS] })
        .catch((error: unknown) => {
          process.emitWarning(`RateLimiterPostgres: deleting the expired rows of ${this._getTableIdentifier()} failed: ${(error as Error).message}`, { code: 'RATEKIT_FLEXIBLE_CLEAR_EXPIRED' });
        })
        .finally(() => this._clearExpiredHourAgo());
    }, CLEAR_EXPIRED_EVERY_MS);
    this._clearExpiredTimeoutId.unref();
  }

  /** A connection for one query, per `storeType` (rlf's `_getConnection`). */
  _getConnection(): Promise<unknown> {
    const client = this.client as unknown;
    switch (this.clientType) {
      case 'sequelize':
        return this._getSequelizeConnectionManager().getConnection();
      case 'knex':
        return (client as KnexLike).client.acquireConnection();
      case 'typeorm':
        return Promise.resolve((client as TypeOrmLike).driver.master);
      default:
        return Promise.resolve(client);
    }
  }

  /** Gives a connection back, per `storeType` (rlf's `_releaseConnection`): true when there is nothing to give back. */
  _releaseConnection(conn?: unknown): unknown {
    switch (this.clientType) {
      case 'sequelize':
        return this._getSequelizeConnectionManager().releaseConnection(conn);
      case 'knex':
        return (this.client as KnexLike).client.releaseConnection(conn);
      default:
        return true;
    }
  }

  /** Sequelize's connection manager: `connectionManager` (v6), else `dialect.connectionManager` (v7, where the first throws), as rlf 11.4. */
  _getSequelizeConnectionManager(): SequelizeConnectionManager {
    const client = this.client as SequelizeLike;
    let accessError: unknown;
    try {
      const manager = client.connectionManager;
      if (manager) return manager;
    } catch (error) {
      accessError = error;
    }
    const dialectManager = client.dialect?.connectionManager;
    if (dialectManager) return dialectManager;
    if (accessError !== undefined) throw accessError instanceof Error ? accessError : new Error('Sequelize connection manager is not available', { cause: accessError });
    throw new Error('Sequelize connection manager is not available');
  }

  /** Sends a query on a connection (rlf's `_query`): a named one is prepared as `<table>:<name>`. */
  _query(q: PostgresQuery): Promise<PostgresResult> {
    const queryObj: PostgresQuery = { text: q.text, values: q.values };
    if (q.name) queryObj.name = `${statementPrefix(this.tableName, this.schemaName)}:${q.name}`;
    return new Promise<PostgresResult>((resolve, reject) => {
      // A connection whose query() throws or returns no promise rejects too (as in rlf).
      this._getConnection()
        .then((conn) =>
          (conn as Queryable).query(queryObj).then(
            (res) => {
              resolve(res);
              this._releaseConnection(conn);
            },
            (error: unknown) => {
              reject(error);
              this._releaseConnection(conn);
            },
          ),
        )
        .catch(reject);
    });
  }

  /** Rejects as rlf does before the table is ready; the creation's failure, when it failed, is the cause. */
  private notReady(): Promise<never> {
    return Promise.reject(new Error('Table is not created yet', this.tableError === undefined ? undefined : { cause: this.tableError }));
  }

  override _getRateLimiterRes(_rlKey: string, changedPoints: number, result: unknown): RateLimiterRes {
    const row = (result as PostgresResult).rows[0]!;
    const points = Number(row.points);
    const res = new RateLimiterRes();
    res.isFirstInDuration = changedPoints === points;
    res.consumedPoints = res.isFirstInDuration ? changedPoints : points;
    res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    // The database clock the statement read; rlf-shaped rows (a subclass's, a stub's) have none: the app's.
    const nowMs = row.now === undefined || row.now === null ? Date.now() : Number(row.now);
    res.msBeforeNext = row.expire ? Math.max(Number(row.expire) - nowMs, 0) : -1;
    return res;
  }

  override _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false, _options: RateLimiterCallOptions = {}): Promise<PostgresResult> {
    if (!this.tableCreated) return this.notReady();
    const statements = this.statements;
    const lone = () =>
      this._query(
        forceExpire
          ? { name: 'ratekit-upsert-force', text: statements.upsertForce, values: [rlKey, points, msDuration] }
          : { name: 'ratekit-upsert', text: statements.upsert, values: [rlKey, points, msDuration] },
      );
    if (!this.coalesce) return lone();
    if (forceExpire) {
      // A set or block waits for the adds of its key asked before it: sent first, they keep their order.
      this.turns.flush();
      return this.sendInOrder(new Set([rlKey]), lone);
    }
    if (this.turns.first()) return this.sendInOrder(new Set([rlKey]), lone);
    return new Promise((resolve, reject) => {
      this.turns.add({ key: rlKey, points, msDuration, resolve, reject });
    });
  }

  override _get(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<PostgresResult | null> {
    if (!this.tableCreated) return this.notReady();
    const send = () => this._query({ name: 'ratekit-get', text: this.statements.get, values: [rlKey] }).then((res) => (res.rowCount === 0 || res.rows.length === 0 ? null : res));
    if (!this.coalesce) return send();
    this.turns.flush();
    return this.sendInOrder(new Set([rlKey]), send);
  }

  override _delete(rlKey: string, _options: RateLimiterCallOptions = {}): Promise<boolean> {
    if (!this.tableCreated) return this.notReady();
    const send = () => this._query({ name: 'rlflx-delete', text: this.statements.delete, values: [rlKey] }).then((res) => (res.rowCount ?? 0) > 0);
    if (!this.coalesce) return send();
    this.turns.flush();
    return this.sendInOrder(new Set([rlKey]), send);
  }

  /**
   * Sends a statement once the statements sent before it that hold one of its
   * keys are done: on a pool they would run on several connections at once,
   * and a key's statements must run in the order they were asked (a batch
   * asked after a lone add, a get after the adds before it). Statements of
   * other keys go at once. Only coalescing uses it: with `coalesce: false`
   * every call is sent at once, as rlf sends it.
   */
  private sendInOrder<T>(keys: ReadonlySet<string>, send: () => Promise<T>): Promise<T> {
    const before: Array<Promise<void>> = [];
    for (const key of keys) {
      const last = this.lastByKey.get(key);
      if (last !== undefined) before.push(last);
    }
    const done = before.length === 0 ? send() : Promise.all(before).then(send);
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    for (const key of keys) this.lastByKey.set(key, settled);
    void settled.then(() => {
      for (const key of keys) if (this.lastByKey.get(key) === settled) this.lastByKey.delete(key);
    });
    return done;
  }

  /** One statement for a batch of adds (a lone one for a batch of one); see postgres-coalesce.ts. */
  private sendBatch(batch: WaitingAdd[]): Promise<unknown> {
    const statements = this.statements;
    if (batch.length === 1) {
      const [add] = batch as [WaitingAdd];
      return this._query({ name: 'ratekit-upsert', text: statements.upsert, values: [add.key, add.points, add.msDuration] }).then(add.resolve, add.reject);
    }
    const folded = foldBatch(batch);
    return this._query({ name: 'ratekit-upsert-batch', text: statements.upsertBatch, values: [folded.keys, folded.points, folded.msDurations] }).then(
      (result) => {
        const rows = new Map(result.rows.map((row) => [row.key, row]));
        batch.forEach((add, j) => {
          const answer = folded.answers[j]!;
          const row = rows.get(folded.keys[answer.row]);
          if (row === undefined) {
            add.reject(new Error(`RateLimiterPostgres: the batch statement returned no row for ${add.key}`));
            return;
          }
          add.resolve({ rows: [{ points: unfoldPoints(Number(row.points), answer.after), expire: row.expire, now: row.now }], rowCount: 1 });
        });
      },
      (error: unknown) => {
        // A PostgreSQL error (an SQLSTATE) rolled the statement back: nothing was counted, so each
        // add runs again alone, in order, and fails, if it does, alone. Anything else (a lost
        // connection) may have come after the commit: each add fails with it.
        const sqlState = (error as { code?: unknown } | null)?.code;
        if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
          return batch.reduce<Promise<unknown>>(
            (previous, add) => previous.then(() => this._query({ name: 'ratekit-upsert', text: statements.upsert, values: [add.key, add.points, add.msDuration] }).then(add.resolve, add.reject)),
            Promise.resolve(),
          );
        }
        for (const add of batch) add.reject(error);
        return undefined;
      },
    );
  }
}
