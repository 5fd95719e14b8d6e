/**
 * The SQL of RateLimiterPostgres, on rate-limiter-flexible's table: one row
 * per limited key, `key varchar(255) PRIMARY KEY` (`prefix:key`), `points
 * integer NOT NULL DEFAULT 0` (the count), `expire bigint` (when the window
 * ends, epoch milliseconds; NULL never ends).
 *
 * The rule is rlf's upsert (`lib/RateLimiterPostgres.js`, 11.4.0): a missing
 * row, or one whose `expire <= now`, starts at the new points with the new
 * expiry; a live row adds the points and keeps its expiry; a NULL expiry
 * never resets (`NULL <= now` is not true); a forced write (set, block)
 * replaces both. Every statement touches one row per key and needs no
 * transaction, as rlf's.
 *
 * One difference, the clock: rlf computes `now` and the new expiry with the
 * app's `Date.now()`. These statements read the database's clock,
 * `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`, once per
 * statement, and return it beside the row, so every app server of a fleet
 * agrees on when a window ends whatever its own clock says. The stored value
 * is the same epoch-millisecond number, so rlf processes read these rows and
 * these statements read theirs; on a fleet whose clocks agree with the
 * database's (NTP), the two count as one.
 *
 * Parameters, per statement, are listed beside each text. Durations arrive
 * as float8 milliseconds and are rounded (rlf would fail on a fractional
 * expiry: its `Date.now() + ms` is sent to a bigint column).
 *
 * @module
 */

/** Quotes an SQL identifier as PostgreSQL reads it: double quotes around, each double quote doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The table as rlf names it: `"schema"."table"`, or `"table"` without a
 * schema. rlf puts the names between double quotes as they are (so a name
 * holding a double quote breaks its SQL); here such a quote is doubled, which
 * names the same table for every name rlf can use.
 */
export function tableIdentifier(tableName: string, schemaName?: string): string {
  return schemaName ? `${quoteIdentifier(schemaName)}.${quoteIdentifier(tableName)}` : quoteIdentifier(tableName);
}

/**
 * The prefix of the prepared statements' names: rlf's `tableName.toLowerCase()`,
 * with the schema before it when there is one (rlf leaves it out, so two
 * limiters on one pool whose tables differ only by schema prepare different
 * texts under one name, which `pg` refuses).
 */
export function statementPrefix(tableName: string, schemaName?: string): string {
  return (schemaName ? `${schemaName}.${tableName}` : tableName).toLowerCase();
}

/** The database clock in epoch milliseconds, as a bigint expression. */
const CLOCK_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** The statements of one table. */
export interface PostgresStatements {
  /** rlf's table: `CREATE TABLE IF NOT EXISTS`. No parameters. */
  readonly createTable: string;
  /** Add points (or start the window). $1 key, $2 points, $3 msDuration (≤ 0: never expires). Returns points, expire, now. */
  readonly upsert: string;
  /** Set points and expiry (set, block). Same parameters and rows as {@link upsert}. */
  readonly upsertForce: string;
  /**
   * Several {@link upsert}s of distinct keys in one statement, locking rows in
   * the order given. $1 keys (varchar[]), $2 points (integer[]), $3
   * msDurations (float8[]). Returns key, points, expire, now per row.
   */
  readonly upsertBatch: string;
  /** The live row of a key. $1 key. Returns points, expire, now; no row when missing or expired. */
  readonly get: string;
  /** $1 key. */
  readonly delete: string;
  /** rlf's `clearExpired(expire)`: delete the rows with `expire < $1` (epoch ms). */
  readonly clearExpired: string;
  /** The periodic sweep: delete the rows that ended over $1 ms ago on the database clock. */
  readonly clearExpiredAgo: string;
}

/** The statements for a table identifier (from {@link tableIdentifier}). */
export function postgresStatements(table: string): PostgresStatements {
  const newExpire = (ms: string) => `CASE WHEN ${ms} > 0 THEN clock.ms + round(${ms})::bigint END`;
  const addOrRestart = `ON CONFLICT (key) DO UPDATE SET
  points = CASE WHEN t.expire <= (SELECT ms FROM clock) THEN EXCLUDED.points ELSE t.points + EXCLUDED.points END,
  expire = CASE WHEN t.expire <= (SELECT ms FROM clock) THEN EXCLUDED.expire ELSE t.expire END`;
  return {
    createTable: `CREATE TABLE IF NOT EXISTS ${table} (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);`,
    upsert: `WITH clock AS (SELECT ${CLOCK_MS} AS ms)
INSERT INTO ${table} AS t (key, points, expire)
SELECT $1::varchar, $2::integer, ${newExpire('$3::float8')} FROM clock
${addOrRestart}
RETURNING t.points, t.expire, (SELECT ms FROM clock) AS now`,
    upsertForce: `WITH clock AS (SELECT ${CLOCK_MS} AS ms)
INSERT INTO ${table} AS t (key, points, expire)
SELECT $1::varchar, $2::integer, ${newExpire('$3::float8')} FROM clock
ON CONFLICT (key) DO UPDATE SET points = EXCLUDED.points, expire = EXCLUDED.expire
RETURNING t.points, t.expire, (SELECT ms FROM clock) AS now`,
    upsertBatch: `WITH clock AS (SELECT ${CLOCK_MS} AS ms)
INSERT INTO ${table} AS t (key, points, expire)
SELECT o.key, o.points, ${newExpire('o.ms')}
FROM unnest($1::varchar[], $2::integer[], $3::float8[]) WITH ORDINALITY AS o(key, points, ms, i), clock
ORDER BY o.i
${addOrRestart}
RETURNING t.key, t.points, t.expire, (SELECT ms FROM clock) AS now`,
    get: `WITH clock AS (SELECT ${CLOCK_MS} AS ms)
SELECT t.points, t.expire, clock.ms AS now FROM ${table} t, clock
WHERE t.key = $1 AND (t.expire > clock.ms OR t.expire IS NULL)`,
    delete: `DELETE FROM ${table} WHERE key = $1`,
    clearExpired: `DELETE FROM ${table} WHERE expire < $1`,
    clearExpiredAgo: `DELETE FROM ${table} WHERE expire < ${CLOCK_MS} - $1::bigint`,
  };
}
