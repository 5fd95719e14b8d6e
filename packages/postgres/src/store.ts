import {
  assertFunction,
  assertInteger,
  assertNonNegative,
  assertObject,
  assertOneOf,
  buildDecision,
  type Decision,
  type EvaluateRequest,
  RateKitOptionError,
  type RateLimitStore,
  type ResolvedLimit,
  type Step,
  resolveCoalescing,
  turnCoalescer,
} from '@ratekit/core';
import { createHash } from 'node:crypto';
import { encodeText } from './quote.js';
import { type SchemaOptions, schemaNames, schemaSql } from './schema.js';

const STORE_NAME = 'postgres';

/** A query as `pg` takes it: a named query is prepared once per connection, then only bound and executed. */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * The part of a `pg` `Pool` or `Client` the store uses: `query()` with a
 * query config. A `Pool` is best: each call borrows a connection, and a
 * broken connection is replaced, so the store recovers when the server comes back.
 */
export interface PgQueryable {
  query(config: PgQueryConfig): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions extends SchemaOptions {
  /**
   * A `pg` `Pool` (recommended) or `Client`, connected and owned by the
   * caller: the store never connects, ends or reconfigures it. Give the pool
   * an `'error'` listener: `pg` emits one when the server drops idle
   * connections (a restart), and an unhandled one ends the process.
   */
  pool: PgQueryable;
  /**
   * Whose clock decides:
   * - `server` (default): the database's `clock_timestamp()`, read inside the
   *   statement after the row lock, so app servers with skewed clocks agree
   *   and the limiter's `now` option is ignored;
   * - `caller`: the limiter's clock (`EvaluateRequest.nowMs`), for tests on
   *   fixed clocks and for replaying schedules.
   * @default 'server'
   */
  clock?: 'server' | 'caller';
  /**
   * How often, in ms, to delete expired rows with {@link PostgresStore.deleteExpired}.
   * One `unref`'d timer per store, so it never keeps the process alive; 0
   * disables it (run `deleteExpired()` yourself, e.g. from a cron job).
   * @default 60_000
   */
  cleanupIntervalMs?: number;
  /** Receives errors of the background cleanup (the timer keeps running). @default console.error */
  onError?: (error: Error) => void;
  /**
   * Coalescing: the decisions of one policy asked after the first of an
   * iteration of the event loop (until the `setImmediate` it schedules: the
   * check phase, after every I/O callback that was ready; or until they are
   * their share of the decisions pending, see `batchesInFlight`, or
   * `maxBatchSize`) go as one statement, which calls the function once per
   * decision, in order (sorted by namespace and key, stably, so that two
   * statements lock rows in the same order and cannot deadlock; a key's
   * decisions keep their order), in one transaction: one commit for all. The
   * first decision of an iteration goes at once, alone (under load, when
   * decisions joined the previous iteration's first, it waits with the
   * others). When the statement fails with a PostgreSQL error (it was
   * rolled back: nothing was charged), each of its decisions runs again
   * alone, so one decision's failure fails it alone. The statement holds the
   * row locks of its decisions until it commits. `false`: one statement per
   * decision.
   * @default true
   */
  coalesce?: boolean;
  /** The most decisions in one coalesced statement (an integer ≥ 2). @default 64 */
  maxBatchSize?: number;
  /**
   * How many coalesced statements the store aims to have in flight at once
   * (an integer ≥ 0): a statement is sent as soon as it holds at least 16
   * decisions and `1 / batchesInFlight` of the decisions pending (waiting, or
   * in a statement not yet answered), so the pool's connections work on
   * several statements while this process builds the next. `0`: a statement
   * goes only at the check phase or at `maxBatchSize`.
   * @default 2
   */
  batchesInFlight?: number;
}

/** The PostgreSQL store. */
export interface PostgresStore extends RateLimitStore {
  /** Always asynchronous: one statement per decision, or one for the decisions of an iteration of the event loop (`coalesce`). */
  evaluate(request: EvaluateRequest): Promise<Decision>;
  resetKey(key: string, namespace: string): Promise<void>;
  /**
   * Creates the table, its index, types and functions if they do not exist,
   * and replaces the functions with this version's. Idempotent, safe to run
   * from several app servers at once. The same SQL is {@link schemaSql} and
   * `@ratekit/postgres/schema.sql`, for migration tools.
   */
  createSchema(): Promise<void>;
  /**
   * Deletes the rows whose every limit state has expired (in batches, so no
   * long lock), and resolves with how many it deleted. Rows that a decision
   * holds locked are skipped, to be deleted next time. Lossless: an expired
   * state is equivalent to no state.
   *
   * @param nowMs - the time to compare expiry with, Unix epoch ms. @default the database clock (`clock: 'server'`), else `Date.now()`
   */
  deleteExpired(nowMs?: number): Promise<number>;
  /**
   * Stops the cleanup timer, sends the decisions waiting for their coalesced
   * statement, and waits for them and for a cleanup in progress. The pool is
   * the caller's: it is not ended.
   */
  dispose(): Promise<void>;
  /** The quoted, schema-qualified table name, e.g. `"ratekit"`. */
  readonly table: string;
}

/** Rows deleted per statement by {@link PostgresStore.deleteExpired}. */
const DELETE_BATCH = 1_000;

/** Parameters per limit in the function's `p_params` array. */
const PARAMETERS_PER_LIMIT = 7;
/** Numbers per limit in the reply of `<table>_evaluate_v2` (the last: `blockedMs`, 0 when not blocked). */
const REPLY_FIELDS_PER_LIMIT = 10;

/**
 * A store on PostgreSQL (through `pg`): every decision, whatever its
 * algorithms and however many limits its policy has, is one statement, a
 * call of the PL/pgSQL function `<table>_evaluate_v2` created by
 * {@link PostgresStore.createSchema} (or the migration `sql/ratekit.sql`).
 *
 * - **Rows.** One row per (namespace, key), in separate columns, never
 *   concatenated: a user-controlled key cannot reach another namespace. The
 *   row holds each limit's state (float8, exact as in JavaScript) and the
 *   time it expires.
 * - **Atomicity.** The function locks the key's row (`SELECT … FOR UPDATE`;
 *   `INSERT … ON CONFLICT DO NOTHING` and a retry for a new key) before it
 *   reads the clock, so concurrent decisions on one key, from any number of
 *   connections and servers, run one after the other. Peeks take no lock;
 *   refusals write nothing.
 * - **Clock.** The database's `clock_timestamp()` by default.
 * - **Coalescing.** The decisions of one policy asked after the first of an
 *   iteration of the event loop go as one statement (see {@link PostgresStoreOptions.coalesce}).
 * - **Expiry.** Every `cleanupIntervalMs`, expired rows are deleted (an index on `expires_at`).
 * - **Failures.** A failed call rejects; the limiter's `onStoreError` and
 *   `storeTimeoutMs` decide what the request gets. With a `pg` `Pool`, the
 *   store works again as soon as the database does.
 *
 * Tested on PostgreSQL 15.
 *
 * @throws {RateKitOptionError} when `pool` has no `query` method, `table` or `schema` is not a usable name, `clock` is not `'server'` or `'caller'`, `cleanupIntervalMs` is negative, or `onError` is not a function.
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createLimiter } from '@ratekit/core';
 * import { postgresStore } from '@ratekit/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * pool.on('error', (error) => console.error('idle PostgreSQL connection failed', error));
 * const store = postgresStore({ pool });
 * await store.createSchema();
 * const limiter = createLimiter({
 *   limits: [{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, { limit: 1_000, windowMs: 3_600_000 }],
 *   store,
 *   onStoreError: 'allow',
 *   storeTimeoutMs: 200,
 * });
 * const decision = await limiter.consume('user:42');
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  assertObject('options', options);
  const pool = options.pool;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function') {
    throw new RateKitOptionError('pool', 'a pg Pool or Client (an object with a query method)', pool);
  }
  const names = schemaNames(options);
  const clock = options.clock ?? 'server';
  assertOneOf('clock', clock, ['server', 'caller'] as const);
  const cleanupIntervalMs = options.cleanupIntervalMs ?? 60_000;
  assertNonNegative('cleanupIntervalMs', cleanupIntervalMs, ' of milliseconds');
  if (cleanupIntervalMs > 0) assertInteger('cleanupIntervalMs', cleanupIntervalMs, 1);
  const onError = options.onError ?? ((error: Error) => console.error(error));
  assertFunction('onError', onError);
  const { coalesce, maxBatchSize, batchesInFlight } = resolveCoalescing(options);
  const createSql = schemaSql(options);

  // $1..$8 are the function's parameters, documented in schema.ts. array_send() gives the
  // reply in binary, so every double arrives exactly (text would depend on extra_float_digits).
  const evaluateText = `SELECT array_send(${names.evaluate}($1::text, $2::text, $3::text, $4::float8, $5::float8, $6::text[], $7::text[], $8::float8[])) AS reply`;
  const evaluateName = `ratekit_evaluate_${digest(evaluateText)}`;
  const resetText = `DELETE FROM ${names.table} WHERE namespace = $1 AND key = $2`;
  const resetName = `ratekit_reset_${digest(resetText)}`;
  // $1: the time (Unix epoch ms; NULL: the database clock); $2: the batch size.
  // SKIP LOCKED leaves rows a decision holds; the outer condition re-checks expiry.
  const deleteText = `WITH now AS (SELECT coalesce(to_timestamp($1::float8 / 1000), clock_timestamp()) AS at),
doomed AS (
  SELECT t.namespace, t.key FROM ${names.table} t, now
  WHERE t.expires_at <= now.at ORDER BY t.expires_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED
)
DELETE FROM ${names.table} t USING doomed, now
WHERE t.namespace = doomed.namespace AND t.key = doomed.key AND t.expires_at <= now.at`;
  const deleteName = `ratekit_delete_expired_${digest(deleteText)}`;

  // The coalesced statement: the function once per row of the decisions' arrays, in their order.
  const batchText = `SELECT array_send(${names.evaluate}(t.namespace, t.key, t.mode, t.cost, t.now_ms, $6::text[], $7::text[], $8::float8[])) AS reply
FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::float8[]) WITH ORDINALITY AS t(namespace, key, mode, cost, now_ms, i) ORDER BY t.i`;
  const batchName = `ratekit_evaluate_batch_${digest(batchText)}`;

  /** Decisions of one policy in one statement (see {@link PostgresStoreOptions.coalesce}); resolves when each is settled. */
  function evaluateMany(batch: readonly Waiting[]): Promise<unknown> {
    try {
      return statement(batch);
    } catch (error) {
      // Sent from a tick, where a throw would reach no caller.
      for (const w of batch) w.reject(error);
      return Promise.resolve();
    }
  }

  function statement(batch: readonly Waiting[]): Promise<unknown> {
    // Sorted by (namespace, key), stably: every statement locks rows in one order.
    const order = batch.map((_, i) => i);
    const encoded = batch.map((w) => [encodeText(w.request.namespace), encodeText(w.request.key)] as const);
    order.sort((a, b) => compare(encoded[a]![0], encoded[b]![0]) || compare(encoded[a]![1], encoded[b]![1]) || a - b);
    const { limits } = batch[0]!.request;
    const shape = limitArguments(limits);
    const values = [
      order.map((i) => encoded[i]![0]),
      order.map((i) => encoded[i]![1]),
      order.map((i) => batch[i]!.request.mode),
      order.map((i) => batch[i]!.request.cost),
      order.map((i) => (clock === 'caller' ? batch[i]!.request.nowMs : null)),
      shape.ids,
      shape.algorithms,
      shape.params,
    ];
    return pool.query({ name: batchName, text: batchText, values }).then(
      (result) => {
        if (result.rows.length !== batch.length) {
          const error = new Error(`Unexpected reply from the ratekit function: ${result.rows.length} rows for ${batch.length} decisions`);
          for (const w of batch) w.reject(error);
          return;
        }
        order.forEach((i, row) => {
          const { request, resolve, reject } = batch[i]!;
          try {
            resolve(decide(result.rows[row]?.reply, request.limits, request.mode, request.cost));
          } catch (error) {
            reject(error);
          }
        });
      },
      (error: unknown) => {
        // A PostgreSQL error (an SQLSTATE) aborted the statement's transaction: nothing was charged,
        // so each decision runs again alone and fails, if it does, alone. Anything else (a lost
        // connection) may have come after the commit: each decision fails with it.
        const sqlState = (error as { code?: unknown } | null)?.code;
        if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
          return batch.reduce<Promise<unknown>>((previous, w) => previous.then(() => evaluateOne(w.request).then(w.resolve, w.reject)), Promise.resolve());
        }
        for (const w of batch) w.reject(explain(error, names.label));
        return undefined;
      },
    );
  }

  // The statements sent in this iteration of the event loop (the first decision's, then the
  // batches'): their keys, and when each is done. On a pool, statements run on several
  // connections at once, so a statement that holds a key of an earlier one of the iteration
  // waits for it (a key's decisions keep their order); the others go at once.
  let sent: Array<{ keys: Set<string>; done: Promise<unknown> }> = [];
  function sendBatch(batch: Waiting[]): Promise<unknown> {
    const send = () => (batch.length === 1 ? evaluateOne(batch[0]!.request).then(batch[0]!.resolve, batch[0]!.reject) : evaluateMany(batch));
    const keys = new Set(batch.map((w) => keyOf(w.request)));
    const before = sent.filter((s) => [...keys].some((key) => s.keys.has(key))).map((s) => s.done);
    const done = before.length === 0 ? send() : Promise.allSettled(before).then(send);
    const settled = done.catch(() => undefined);
    sent.push({ keys, done: settled });
    return settled;
  }
  // One statement per policy (its limits array: the function's limit arguments are the statement's).
  const turns = turnCoalescer<Waiting>({
    maxBatchSize,
    batchesInFlight,
    send: sendBatch,
    groupOf: (w) => w.request.limits,
    onTurnEnd: () => {
      sent = [];
    },
  });

  function evaluate(request: EvaluateRequest): Promise<Decision> {
    if (!coalesce) return evaluateOne(request);
    // The first decision of an iteration goes at once, alone (unless under load): a decision alone waits for nothing.
    if (turns.first()) {
      const decision = evaluateOne(request);
      sent.push({ keys: new Set([keyOf(request)]), done: decision.catch(() => undefined) });
      return decision;
    }
    return new Promise((resolve, reject) => {
      turns.add({ request, resolve, reject });
    });
  }

  async function evaluateOne(request: EvaluateRequest): Promise<Decision> {
    const { limits, mode, cost } = request;
    const shape = limitArguments(limits);
    const result = await pool
      .query({
        name: evaluateName,
        text: evaluateText,
        values: [encodeText(request.namespace), encodeText(request.key), mode, cost, clock === 'caller' ? request.nowMs : null, shape.ids, shape.algorithms, shape.params],
      })
      .catch((error: unknown) => {
        throw explain(error, names.label);
      });
    return decide(result.rows[0]?.reply, limits, mode, cost);
  }

  async function deleteExpired(nowMs?: number): Promise<number> {
    const at = nowMs ?? (clock === 'caller' ? Date.now() : null);
    let total = 0;
    for (;;) {
      const result = await pool.query({ name: deleteName, text: deleteText, values: [at, DELETE_BATCH] }).catch((error: unknown) => {
        throw explain(error, names.label);
      });
      const deleted = result.rowCount ?? 0;
      total += deleted;
      if (deleted < DELETE_BATCH) return total;
    }
  }

  let cleaning: Promise<unknown> | undefined;
  const timer =
    cleanupIntervalMs > 0
      ? setInterval(() => {
          if (cleaning !== undefined) return;
          cleaning = deleteExpired()
            .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))))
            .finally(() => {
              cleaning = undefined;
            });
        }, cleanupIntervalMs)
      : undefined;
  timer?.unref();

  return {
    name: STORE_NAME,
    shared: true,
    clock,
    table: names.table,
    evaluate,
    async resetKey(key, namespace) {
      await pool.query({ name: resetName, text: resetText, values: [encodeText(namespace), encodeText(key)] }).catch((error: unknown) => {
        throw explain(error, names.label);
      });
    },
    async createSchema() {
      // No values: pg sends it as one simple query, which PostgreSQL runs as one transaction.
      await pool.query({ text: createSql });
    },
    deleteExpired,
    async dispose() {
      if (timer !== undefined) clearInterval(timer);
      // Decisions waiting for their iteration's statement are sent now, before the caller ends the pool.
      turns.flush();
      await Promise.all([cleaning, ...sent.map((s) => s.done)]);
    },
  };
}

/** A decision waiting for its iteration's statement. */
interface Waiting {
  readonly request: EvaluateRequest;
  readonly resolve: (decision: Decision) => void;
  readonly reject: (error: unknown) => void;
}

/** A decision's row: its namespace and key. */
function keyOf(request: EvaluateRequest): string {
  return `${request.namespace.length}:${request.namespace}:${request.key}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A short, stable digest of a statement's text: distinct statements get distinct prepared-statement names. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The function's limit arguments for a policy, computed once per limits array (the limiter reuses its frozen arrays). */
interface LimitArguments {
  readonly ids: readonly string[];
  readonly algorithms: readonly string[];
  readonly params: ReadonlyArray<number | null>;
}

const argumentCache = new WeakMap<readonly ResolvedLimit[], LimitArguments>();

function limitArguments(limits: readonly ResolvedLimit[]): LimitArguments {
  let args = argumentCache.get(limits);
  if (args === undefined) {
    const params: Array<number | null> = [];
    for (const limit of limits) {
      params.push(limit.limit, limit.windowMs, limit.burst, limit.refill === 'interval' ? 1 : 0, limit.maxDelayMs, limit.refusedPenaltyCapMs ?? null, limit.blockDurationMs);
    }
    args = { ids: limits.map((l) => l.id), algorithms: limits.map((l) => l.algorithm), params };
    if (params.length !== PARAMETERS_PER_LIMIT * limits.length) throw new Error('ratekit: limit parameters out of step with the SQL function');
    argumentCache.set(limits, args);
  }
  return args;
}

const NO_STATE: readonly number[] = Object.freeze([]);

/**
 * Reads a float8[] in PostgreSQL's binary array format (`array_send`): ndim,
 * has-nulls flag, element type, then per dimension its length and lower
 * bound, then per element a length and 8 big-endian bytes.
 */
function readFloat8Array(reply: unknown): Float64Array {
  if (!(reply instanceof Uint8Array) || reply.length < 12) throw new Error(`Unexpected reply from the ratekit function: ${String(reply)}`);
  const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
  const dimensions = view.getInt32(0);
  if (dimensions !== 1 || view.getInt32(4) !== 0 || view.getUint32(8) !== FLOAT8_OID) {
    throw new Error(`Unexpected reply from the ratekit function: a ${dimensions}-dimensional array of type ${view.getUint32(8)}`);
  }
  const length = view.getInt32(12);
  const values = new Float64Array(length);
  for (let i = 0, at = 20; i < length; i++, at += 12) {
    if (view.getInt32(at) !== 8) throw new Error('Unexpected reply from the ratekit function: an element is not a float8');
    values[i] = view.getFloat64(at + 4);
  }
  return values;
}

const FLOAT8_OID = 701;

/** Turns the function's reply into a Decision with core's buildDecision, as the in-memory store's policy would. */
function decide(reply: unknown, limits: readonly ResolvedLimit[], mode: EvaluateRequest['mode'], cost: number): Decision {
  const values = readFloat8Array(reply);
  if (values.length !== 2 + REPLY_FIELDS_PER_LIMIT * limits.length) {
    throw new Error(`Unexpected reply from the ratekit function: ${values.length} numbers for ${limits.length} limit(s)`);
  }
  const nowMs = values[0]!;
  const allowed = values[1] === 1;
  const steps: Step[] = [];
  for (let i = 0; i < limits.length; i++) {
    const at = 2 + i * REPLY_FIELDS_PER_LIMIT;
    steps.push({
      allowed: values[at] === 1,
      capacity: values[at + 1]!,
      retryAfterMs: values[at + 2]!,
      delayMs: values[at + 3]!,
      tokensBefore: values[at + 4]!,
      tokensRefilled: values[at + 5]!,
      tokensAfter: values[at + 6]!,
      resetMs: values[at + 7]!,
      nextRefillMs: values[at + 8]!,
      next: NO_STATE,
      nextIfRefused: undefined,
    });
  }
  // The reply gives the charged step's verdict with the shown step's counts; as in
  // evaluatePolicy, the counts are at cost 0 unless a consume was admitted.
  const charged = mode === 'consume' && allowed;
  const decision = buildDecision({ limits, charged: steps, uncharged: charged ? undefined : steps, allowed, cost: mode === 'refund' ? 0 : cost, nowMs });
  // A blocked limit's time left in its block, as evaluatePolicy reports it: set only when blocked.
  for (let i = 0; i < limits.length; i++) {
    const blockedMs = values[2 + i * REPLY_FIELDS_PER_LIMIT + 9]!;
    if (blockedMs > 0) (decision.limits[i] as { blockedMs?: number }).blockedMs = blockedMs;
  }
  return decision;
}

/** PostgreSQL error codes meaning the store's objects are missing. */
const MISSING_OBJECT = new Set(['42P01', '42883', '42704']);

/** Adds a hint to the errors of a schema that was never created; other errors pass through unchanged. */
function explain(error: unknown, table: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && MISSING_OBJECT.has(code)) {
    return new Error(`${(error as Error).message}: the ratekit table "${table}" or its functions are missing; call store.createSchema() or run @ratekit/postgres/schema.sql`, {
      cause: error,
    });
  }
  return error;
}
