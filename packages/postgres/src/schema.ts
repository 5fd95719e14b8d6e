import { RateKitOptionError } from '@ratekit/core';
import { isIdentifier, quoteIdentifier } from './quote.js';

/** Where the store's objects live. */
export interface SchemaOptions {
  /**
   * The table's name. The store's other objects are named after it:
   * `<table>_slot` and `<table>_step_result` (types), `<table>_evaluate_v2`
   * (and `<table>_evaluate`, its reply as earlier versions read it),
   * `<table>_step`, `<table>_refund`, `<table>_ttl`, `<table>_refill` and `<table>_blocked`
   * (functions) and `<table>_expires_at_idx` (index). Any name works; it is
   * quoted. At most 48 bytes, so that every derived name fits PostgreSQL's 63.
   * @default 'ratekit'
   */
  table?: string;
  /** The schema holding the objects. @default unset: the first schema of the `search_path` (usually `public`) */
  schema?: string;
  /**
   * Create the table `UNLOGGED`: no WAL for each decision (faster writes, no
   * replication), but PostgreSQL empties it after a crash, so every key
   * starts afresh (the limits fail open once). Only used when the table is
   * created; an existing table is left as it is.
   * @default false
   */
  unlogged?: boolean;
}

/** The quoted, schema-qualified names of every object of the store, derived from {@link SchemaOptions}. */
export interface SchemaNames {
  readonly table: string;
  readonly slotType: string;
  readonly stepType: string;
  /** The decision function this version calls (`<table>_evaluate_v2`: 10 numbers per limit, `blockedMs` the last). */
  readonly evaluate: string;
  /** The decision function of earlier versions (`<table>_evaluate`: 9 numbers per limit), kept for their app servers. */
  readonly evaluateV1: string;
  readonly step: string;
  readonly refund: string;
  readonly ttl: string;
  readonly refill: string;
  readonly blocked: string;
  /** Unqualified: an index always lives in its table's schema. */
  readonly index: string;
  /** The unquoted table name and schema, for messages. */
  readonly label: string;
}

const DEFAULT_TABLE = 'ratekit';
/** The longest suffix appended to the table name (`_expires_at_idx`). */
const LONGEST_SUFFIX = '_expires_at_idx'.length;

/**
 * Validates the schema options and derives the names of the store's objects.
 *
 * @throws {RateKitOptionError} when `table` or `schema` is not a usable identifier (empty, a NUL character, or too long).
 */
export function schemaNames(options: Pick<SchemaOptions, 'table' | 'schema'> = {}): SchemaNames {
  const table = options.table ?? DEFAULT_TABLE;
  if (!isIdentifier(table, LONGEST_SUFFIX)) {
    throw new RateKitOptionError('table', `a non-empty name without NUL, at most ${63 - LONGEST_SUFFIX} bytes`, table);
  }
  const schema = options.schema;
  if (schema !== undefined && !isIdentifier(schema)) {
    throw new RateKitOptionError('schema', 'a non-empty name without NUL, at most 63 bytes', schema);
  }
  const qualified = (name: string) => (schema === undefined ? quoteIdentifier(name) : `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`);
  return Object.freeze({
    table: qualified(table),
    slotType: qualified(`${table}_slot`),
    stepType: qualified(`${table}_step_result`),
    evaluate: qualified(`${table}_evaluate_v2`),
    evaluateV1: qualified(`${table}_evaluate`),
    step: qualified(`${table}_step`),
    refund: qualified(`${table}_refund`),
    ttl: qualified(`${table}_ttl`),
    refill: qualified(`${table}_refill`),
    blocked: qualified(`${table}_blocked`),
    index: quoteIdentifier(`${table}_expires_at_idx`),
    label: schema === undefined ? table : `${schema}.${table}`,
  });
}

/** The parameters of one limit, as every algorithm function takes them. */
const LIMIT_PARAMETERS = `
  algorithm text,        -- fixed-window | sliding-window | sliding-log | token-bucket | gcra | delay
  state float8[],        -- the limit's stored state (core's LimitState); NULL: never seen
  lim float8,            -- limit: the quota per window (the refill per window for buckets)
  window_ms float8,      -- windowMs
  burst float8,          -- capacity of token-bucket, gcra and delay
  interval_refill boolean, -- token-bucket: refill 'interval' (true) or 'continuous' (false)
  max_delay_ms float8,   -- delay: maxDelayMs
  penalty_cap_ms float8, -- delay: refusedPenaltyCapMs; NULL when unset
  cost float8,           -- the cost charged (step) or given back (refund); 0 for ttl
  now_ms float8          -- the decision's clock, Unix epoch ms`;

const LIMIT_SIGNATURE = 'text, float8[], float8, float8, float8, boolean, float8, float8, float8, float8';

/**
 * The SQL that creates (or updates) the store's table, types, index and
 * functions. Idempotent: every statement is `IF NOT EXISTS` or `OR REPLACE`,
 * and the script first takes a transaction-scoped advisory lock, so several
 * app servers may run it at once. Run it in one transaction (one simple
 * query, as `createSchema()` does, or your migration tool's transaction).
 * `sql/ratekit.sql` in the package is this script for the default options.
 *
 * The functions are a line-for-line port of @ratekit/core's
 * `algorithms/*.ts` and `policy.ts` in PL/pgSQL, in float8 (IEEE doubles,
 * as in JavaScript); the differential tests hold them to the in-memory store.
 *
 * @throws {RateKitOptionError} when `table` or `schema` is not a usable identifier.
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * writeFileSync('migrations/0042_ratekit.sql', schemaSql({ table: 'rate_limits', unlogged: true }));
 * ```
 */
export function schemaSql(options: SchemaOptions = {}): string {
  const n = schemaNames(options);
  const lockKey = hash32(`ratekit:${n.label}`);
  return `-- ratekit PostgreSQL store (@ratekit/postgres): table ${n.label}.
-- Idempotent; run it in one transaction. Generated by schemaSql() from @ratekit/postgres.

-- Serialise concurrent runs (several app servers starting at once).
SELECT pg_advisory_xact_lock(${lockKey});

-- One limit's state under a key: the limit's id, when the state stops mattering
-- (Unix epoch ms: from then on it is equivalent to no state), and the state itself.
DO ${dollar(`BEGIN
  CREATE TYPE ${n.slotType} AS (id text, expires_ms float8, state float8[]);
EXCEPTION WHEN duplicate_object THEN NULL;
END`)};

-- What one algorithm step reports (core's Step).
DO ${dollar(`BEGIN
  CREATE TYPE ${n.stepType} AS (
    allowed boolean,
    next float8[],
    next_if_refused float8[],
    capacity float8,
    tokens_before float8,
    tokens_refilled float8,
    tokens_after float8,
    reset_ms float8,
    retry_after_ms float8,
    next_refill_ms float8,
    delay_ms float8
  );
EXCEPTION WHEN duplicate_object THEN NULL;
END`)};

-- One row per (namespace, key), never concatenated: a user-controlled key cannot
-- reach another namespace. "C" collation: keys compare byte by byte.
CREATE ${options.unlogged === true ? 'UNLOGGED ' : ''}TABLE IF NOT EXISTS ${n.table} (
  namespace text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  slots ${n.slotType}[] NOT NULL,
  -- The latest expires_ms of the slots, rounded up to the second (so that most
  -- updates leave the indexed column alone and can be HOT).
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (namespace, key)
) WITH (fillfactor = 70);

CREATE INDEX IF NOT EXISTS ${n.index} ON ${n.table} (expires_at);

-- core/src/algorithms/token-bucket.ts refill(): the level at now_ms and the
-- refill timestamp to store, as ARRAY[tokens, at_ms].
CREATE OR REPLACE FUNCTION ${n.refill}(state float8[], lim float8, window_ms float8, burst float8, interval_refill boolean, now_ms float8)
RETURNS float8[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS ${dollar(`
DECLARE
  elapsed float8;
  intervals float8;
BEGIN
  IF state IS NULL THEN RETURN ARRAY[burst, now_ms]; END IF;
  elapsed := greatest(0, now_ms - state[2]);
  IF NOT interval_refill THEN
    RETURN ARRAY[least(burst, state[1] + elapsed / (window_ms / lim)), greatest(state[2], now_ms)];
  END IF;
  intervals := floor(elapsed / window_ms);
  IF intervals = 0 THEN RETURN ARRAY[state[1], state[2]]; END IF;
  RETURN ARRAY[least(burst, state[1] + intervals * lim), state[2] + intervals * window_ms];
END
`)};

-- core's Algorithm.step(state, limit, cost, nowMs) for every algorithm: charges
-- cost (0 = a peek) without writing anything.
CREATE OR REPLACE FUNCTION ${n.step}(${LIMIT_PARAMETERS}
) RETURNS ${n.stepType} LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS ${dollar(`
DECLARE
  EPS CONSTANT float8 := 1e-9;            -- tolerance.ts EPSILON
  DBL_EPS CONSTANT float8 := 2.220446049250313e-16; -- Number.EPSILON, 2^-52
  INF CONSTANT float8 := 'Infinity';
  r ${n.stepType};
  t float8; tau float8; tat float8; new_tat float8; slack float8; tokens float8; whole float8;
  raw_wait float8; wait float8; refused_tat float8; after float8;
  lvl float8[]; at_ms float8; stored float8; until_full float8; missing float8; to_next float8; fraction float8;
  expired boolean; start_ms float8; used float8; available float8; end_ms float8; busy boolean;
  prev_count float8; cur_count float8; elapsed float8; estimate float8; stored_used float8; total float8; room float8; until_next float8;
  live float8[]; nxt float8[]; m int; i int; remaining float8; 
BEGIN
  r.next_if_refused := NULL;
  r.delay_ms := 0;
  IF algorithm = 'gcra' OR algorithm = 'delay' THEN
    -- gcra.ts / delay.ts: state [tatMs]
    t := window_ms / lim;
    tau := burst * t;
    tat := greatest(coalesce(state[1], now_ms), now_ms);
    new_tat := tat + cost * t;
    -- tolerance.ts tatSlackMs
    slack := EPS * t + (greatest(0, new_tat - now_ms) / t + 1) * abs(new_tat) * DBL_EPS;
    -- tolerance.ts snapToWhole, with JavaScript's Math.round (ties toward +Infinity)
    tokens := burst - (tat - now_ms) / t;
    whole := floor(tokens + 0.5);
    IF whole - tokens > 0.5 THEN whole := whole - 1; END IF;
    IF abs(tokens - whole) <= slack / t THEN tokens := whole; END IF;
    r.next := ARRAY[new_tat];
    r.capacity := burst;
    r.tokens_before := tokens;
    r.tokens_refilled := 0;
    r.tokens_after := tokens - cost;
    r.reset_ms := new_tat - now_ms;
    IF algorithm = 'gcra' THEN
      r.allowed := new_tat - now_ms <= tau + slack;
      after := tokens - cost;
      r.retry_after_ms := CASE WHEN r.allowed THEN 0 WHEN cost > burst + EPS THEN INF ELSE new_tat - tau - now_ms END;
      r.next_refill_ms := CASE WHEN new_tat <= now_ms THEN 0 ELSE least(new_tat - now_ms, (1 - (after - floor(after + EPS))) * t) END;
    ELSE
      raw_wait := new_tat - tau - now_ms;
      wait := CASE WHEN raw_wait <= slack THEN 0 ELSE raw_wait END;
      r.allowed := wait <= max_delay_ms + slack;
      refused_tat := CASE WHEN penalty_cap_ms IS NULL THEN tat ELSE greatest(tat, least(new_tat, now_ms + penalty_cap_ms)) END;
      IF penalty_cap_ms IS NOT NULL THEN r.next_if_refused := ARRAY[refused_tat]; END IF;
      r.retry_after_ms := CASE
        WHEN r.allowed THEN 0
        WHEN cost * t - tau > max_delay_ms + EPS THEN INF
        ELSE refused_tat + cost * t - tau - max_delay_ms - now_ms END;
      r.next_refill_ms := CASE WHEN new_tat <= now_ms THEN 0 ELSE least(new_tat - now_ms, t) END;
      r.delay_ms := CASE WHEN r.allowed THEN wait ELSE 0 END;
    END IF;

  ELSIF algorithm = 'token-bucket' THEN
    -- token-bucket.ts: state [tokens, refilledAtMs]
    t := window_ms / lim;
    lvl := ${n.refill}(state, lim, window_ms, burst, interval_refill, now_ms);
    tokens := lvl[1];
    at_ms := lvl[2];
    stored := CASE WHEN state IS NULL THEN burst ELSE state[1] END;
    r.allowed := cost <= tokens + EPS;
    after := tokens - cost;
    -- timeToTokens(burst - after)
    missing := burst - after;
    until_full := CASE
      WHEN missing <= EPS THEN 0
      WHEN NOT interval_refill THEN missing * t
      ELSE at_ms + ceil(missing / lim - EPS) * window_ms - now_ms END;
    r.next := ARRAY[after, at_ms];
    r.capacity := burst;
    r.tokens_before := stored;
    r.tokens_refilled := tokens - stored;
    r.tokens_after := after;
    r.reset_ms := until_full;
    IF r.allowed THEN
      r.retry_after_ms := 0;
    ELSIF cost > burst + EPS THEN
      r.retry_after_ms := INF;
    ELSE
      missing := cost - tokens;
      r.retry_after_ms := CASE
        WHEN missing <= EPS THEN 0
        WHEN NOT interval_refill THEN missing * t
        ELSE at_ms + ceil(missing / lim - EPS) * window_ms - now_ms END;
    END IF;
    IF after >= burst - EPS THEN
      r.next_refill_ms := 0;
    ELSE
      -- timeToNextWhole(after)
      IF interval_refill THEN
        to_next := at_ms + window_ms - now_ms;
      ELSE
        fraction := after - floor(after + EPS);
        to_next := (1 - greatest(0, fraction)) * t;
      END IF;
      r.next_refill_ms := least(until_full, to_next);
    END IF;

  ELSIF algorithm = 'fixed-window' THEN
    -- fixed-window.ts: state [windowStartMs, used]
    expired := state IS NULL OR now_ms >= state[1] + window_ms;
    start_ms := CASE WHEN expired THEN now_ms ELSE state[1] END;
    used := CASE WHEN expired THEN 0 ELSE state[2] END;
    stored := CASE WHEN state IS NULL THEN 0 ELSE state[2] END;
    available := lim - used;
    r.allowed := cost <= available + EPS;
    end_ms := start_ms + window_ms;
    busy := used + cost > 0;
    r.next := ARRAY[start_ms, used + cost];
    r.capacity := lim;
    r.tokens_before := lim - stored;
    r.tokens_refilled := stored - used;
    r.tokens_after := available - cost;
    r.reset_ms := CASE WHEN busy THEN end_ms - now_ms ELSE 0 END;
    r.retry_after_ms := CASE WHEN r.allowed THEN 0 WHEN cost > lim + EPS THEN INF ELSE end_ms - now_ms END;
    r.next_refill_ms := CASE WHEN busy THEN end_ms - now_ms ELSE 0 END;

  ELSIF algorithm = 'sliding-window' THEN
    -- sliding-window.ts: state [windowStartMs, previousCount, currentCount]
    start_ms := floor(now_ms / window_ms) * window_ms;
    IF state IS NULL THEN prev_count := 0; cur_count := 0;
    ELSIF state[1] = start_ms THEN prev_count := state[2]; cur_count := state[3];
    ELSIF state[1] = start_ms - window_ms THEN prev_count := state[3]; cur_count := 0;
    ELSE prev_count := 0; cur_count := 0;
    END IF;
    elapsed := now_ms - start_ms;
    estimate := (prev_count * (window_ms - elapsed)) / window_ms + cur_count;
    r.allowed := estimate + cost <= lim + EPS;
    stored_used := CASE WHEN state IS NULL THEN 0 ELSE state[2] + state[3] END;
    total := cur_count + cost;
    r.next := ARRAY[start_ms, prev_count, total];
    r.capacity := lim;
    r.tokens_before := lim - stored_used;
    r.tokens_refilled := stored_used - estimate;
    r.tokens_after := lim - estimate - cost;
    r.reset_ms := CASE
      WHEN total > 0 THEN start_ms + 2 * window_ms - now_ms
      WHEN prev_count > 0 THEN start_ms + window_ms - now_ms
      ELSE 0 END;
    IF r.allowed THEN
      r.retry_after_ms := 0;
    ELSIF cost > lim + EPS THEN
      r.retry_after_ms := INF;
    ELSE
      -- retryAfter(): within this window the previous count decays; else in the next one.
      room := lim - cur_count - cost;
      IF room >= -EPS AND prev_count > 0 THEN
        r.retry_after_ms := greatest(0, window_ms * (1 - room / prev_count) - elapsed);
      ELSE
        until_next := window_ms - elapsed;
        r.retry_after_ms := CASE
          WHEN cur_count <= 0 THEN until_next
          ELSE until_next + greatest(0, window_ms * (1 - (lim - cost) / cur_count)) END;
      END IF;
    END IF;
    r.next_refill_ms := CASE
      WHEN prev_count > 0 THEN least(window_ms / prev_count, window_ms - elapsed)
      WHEN total > 0 THEN window_ms - elapsed
      ELSE 0 END;

  ELSIF algorithm = 'sliding-log' THEN
    -- sliding-log.ts: state [t1, c1, t2, c2, ...], oldest first
    m := coalesce(cardinality(state), 0);
    i := 1;
    WHILE i <= m AND state[i] <= now_ms - window_ms LOOP i := i + 2; END LOOP;
    live := CASE WHEN m = 0 THEN '{}'::float8[] WHEN i = 1 THEN state ELSE state[i:m] END;
    stored := 0;
    FOR j IN 1..m / 2 LOOP stored := stored + state[2 * j]; END LOOP;
    used := 0;
    FOR j IN 1..cardinality(live) / 2 LOOP used := used + live[2 * j]; END LOOP;
    r.allowed := used + cost <= lim + EPS;
    nxt := live;
    IF cost > 0 THEN
      m := cardinality(nxt);
      IF m > 0 AND nxt[m - 1] = now_ms THEN nxt[m] := nxt[m] + cost;
      ELSE nxt := nxt || ARRAY[now_ms, cost];
      END IF;
    END IF;
    m := cardinality(nxt);
    r.next := nxt;
    r.capacity := lim;
    r.tokens_before := lim - stored;
    r.tokens_refilled := stored - used;
    r.tokens_after := lim - used - cost;
    r.reset_ms := CASE WHEN m = 0 THEN 0 ELSE nxt[m - 1] + window_ms - now_ms END;
    IF r.allowed THEN
      r.retry_after_ms := 0;
    ELSIF cost > lim + EPS THEN
      r.retry_after_ms := INF;
    ELSE
      -- retryAfter(): until enough of the oldest entries have left the window.
      r.retry_after_ms := 0;
      remaining := used;
      i := 1;
      WHILE i < cardinality(live) LOOP
        remaining := remaining - live[i + 1];
        IF remaining + cost <= lim + EPS THEN r.retry_after_ms := live[i] + window_ms - now_ms; EXIT; END IF;
        i := i + 2;
      END LOOP;
    END IF;
    r.next_refill_ms := CASE WHEN m = 0 THEN 0 ELSE nxt[1] + window_ms - now_ms END;

  ELSE
    RAISE EXCEPTION 'ratekit: unknown algorithm %', algorithm USING ERRCODE = '22023';
  END IF;
  RETURN r;
END
`)};

-- core's Algorithm.refund(state, limit, cost, nowMs): the state after giving cost
-- back, never beyond full; NULL: no state (delete it).
CREATE OR REPLACE FUNCTION ${n.refund}(${LIMIT_PARAMETERS}
) RETURNS float8[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS ${dollar(`
DECLARE
  tat float8; lvl float8[]; start_ms float8; prev_count float8; cur_count float8;
  live float8[]; m int; i int; owed float8; c float8;
BEGIN
  IF algorithm = 'gcra' OR algorithm = 'delay' THEN
    IF state IS NULL THEN RETURN NULL; END IF;
    tat := state[1] - cost * (window_ms / lim);
    RETURN CASE WHEN tat <= now_ms THEN NULL ELSE ARRAY[tat] END;
  ELSIF algorithm = 'token-bucket' THEN
    lvl := ${n.refill}(state, lim, window_ms, burst, interval_refill, now_ms);
    RETURN ARRAY[least(burst, lvl[1] + cost), lvl[2]];
  ELSIF algorithm = 'fixed-window' THEN
    IF state IS NULL OR now_ms >= state[1] + window_ms THEN RETURN state; END IF;
    RETURN ARRAY[state[1], greatest(0, state[2] - cost)];
  ELSIF algorithm = 'sliding-window' THEN
    IF state IS NULL THEN RETURN NULL; END IF;
    start_ms := floor(now_ms / window_ms) * window_ms;
    IF state[1] = start_ms THEN prev_count := state[2]; cur_count := state[3];
    ELSIF state[1] = start_ms - window_ms THEN prev_count := state[3]; cur_count := 0;
    ELSE prev_count := 0; cur_count := 0;
    END IF;
    RETURN ARRAY[start_ms, prev_count, greatest(0, cur_count - cost)];
  ELSIF algorithm = 'sliding-log' THEN
    m := coalesce(cardinality(state), 0);
    i := 1;
    WHILE i <= m AND state[i] <= now_ms - window_ms LOOP i := i + 2; END LOOP;
    live := CASE WHEN m = 0 THEN '{}'::float8[] WHEN i = 1 THEN state ELSE state[i:m] END;
    owed := cost;
    -- Give back the newest units first: they would have expired last.
    WHILE owed > 0 AND cardinality(live) > 0 LOOP
      m := cardinality(live);
      c := live[m];
      IF c > owed THEN
        live[m] := c - owed;
        owed := 0;
      ELSE
        live := CASE WHEN m = 2 THEN '{}'::float8[] ELSE live[1:m - 2] END;
        owed := owed - c;
      END IF;
    END LOOP;
    RETURN live;
  END IF;
  RAISE EXCEPTION 'ratekit: unknown algorithm %', algorithm USING ERRCODE = '22023';
END
`)};

-- core's Algorithm.ttlMs(state, limit, nowMs): ms after now_ms from which the
-- state is equivalent to no state at all.
CREATE OR REPLACE FUNCTION ${n.ttl}(${LIMIT_PARAMETERS}
) RETURNS float8 LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS ${dollar(`
DECLARE
  lvl float8[]; missing float8; m int;
BEGIN
  IF algorithm = 'gcra' OR algorithm = 'delay' THEN
    RETURN state[1] - now_ms;
  ELSIF algorithm = 'token-bucket' THEN
    lvl := ${n.refill}(state, lim, window_ms, burst, interval_refill, now_ms);
    missing := burst - lvl[1];
    RETURN CASE
      WHEN missing <= 1e-9 THEN 0
      WHEN NOT interval_refill THEN missing * (window_ms / lim)
      ELSE lvl[2] + ceil(missing / lim - 1e-9) * window_ms - now_ms END;
  ELSIF algorithm = 'fixed-window' THEN
    RETURN state[1] + window_ms - now_ms;
  ELSIF algorithm = 'sliding-window' THEN
    RETURN state[1] + 2 * window_ms - now_ms;
  ELSIF algorithm = 'sliding-log' THEN
    m := coalesce(cardinality(state), 0);
    RETURN CASE WHEN m = 0 THEN 0 ELSE state[m - 1] + window_ms - now_ms END;
  END IF;
  RAISE EXCEPTION 'ratekit: unknown algorithm %', algorithm USING ERRCODE = '22023';
END
`)};

-- core's policy.ts stepLimit for a limit whose state is blocked for left_ms more: the step
-- refuses, writes nothing, and reports the key as empty until the block ends.
CREATE OR REPLACE FUNCTION ${n.blocked}(r ${n.stepType}, left_ms float8, cost float8)
RETURNS ${n.stepType} LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS ${dollar(`
BEGIN
  r.allowed := false;
  r.next_if_refused := NULL;
  r.tokens_before := 0;
  r.tokens_refilled := 0;
  r.tokens_after := -cost;
  r.reset_ms := greatest(left_ms, r.reset_ms);
  r.retry_after_ms := CASE WHEN r.retry_after_ms = 'Infinity'::float8 THEN r.retry_after_ms ELSE greatest(left_ms, r.retry_after_ms) END;
  r.next_refill_ms := greatest(left_ms, r.next_refill_ms);
  r.delay_ms := 0;
  RETURN r;
END
`)};

-- One whole decision (core's policy.ts evaluatePolicy, all-or-nothing), atomically:
-- the row is locked (SELECT ... FOR UPDATE) before the clock is read, so decisions on
-- one key are serialised and see time move forward. Peeks take no lock and write
-- nothing; refusals write nothing, except what a limit that itself refused records: the
-- refusedPenaltyCapMs of a delay limit, and a block (blockDurationMs). A blocked state is the
-- limit's state followed by its blocked-until time (core's algorithms/block.ts: its length tells).
--
-- Returns the decision as a float8[] (the store reads it with array_send(), in binary,
-- so every double arrives exactly whatever the session's extra_float_digits):
--   now_ms allowed(1|0), then 10 per limit, in the order of the policy:
--   allowed(1|0) capacity retry_after_ms delay_ms                     (the step at the requested cost)
--   tokens_before tokens_refilled tokens_after reset_ms next_refill_ms  (the step shown: at cost 0
--                                                    when the policy refused or peeked)
--   blocked_ms                 (ms left in the limit's block in the state the decision leaves; 0: none)
-- The name carries the reply's version: ${n.evaluateV1} (below) keeps the reply of 9 per limit
-- that app servers of earlier versions read, so a rolling upgrade can run both.
CREATE OR REPLACE FUNCTION ${n.evaluate}(
  p_namespace text,  -- the limiter's namespace (its prefix), encoded by the store
  p_key text,        -- the user's key, encoded by the store
  p_mode text,       -- consume | peek | refund
  p_cost float8,     -- the cost, >= 0
  p_now_ms float8,   -- the caller's clock, Unix epoch ms; NULL: the database clock (clock_timestamp())
  p_ids text[],      -- each limit's id (core's ResolvedLimit.id): the slot holding its state
  p_algorithms text[], -- each limit's algorithm
  p_params float8[]  -- 7 per limit: limit, window_ms, burst, interval refill (1|0), max_delay_ms, refused_penalty_cap_ms (NULL when unset), block_duration_ms (0: none)
) RETURNS float8[] LANGUAGE plpgsql VOLATILE AS ${dollar(`
DECLARE
  n int := coalesce(cardinality(p_ids), 0);
  stored ${n.slotType}[];
  found_row boolean;
  now_ms float8;
  states ${n.slotType}[];
  charged ${n.stepType}[];
  shown ${n.stepType}[];
  st ${n.stepType};
  allowed boolean;
  write_ids text[];
  write_states ${n.slotType}[];
  next_slots ${n.slotType}[];
  s ${n.slotType};
  state float8[];
  refunded float8[];
  expires float8;
  zero ${n.stepType}[];
  write_until float8[];
  blk float8;
  block_ms float8;
  m int;
  base_len int;
  reply float8[];
  left_blocks float8[];
  o int;
BEGIN
  IF n = 0 OR cardinality(p_algorithms) <> n OR cardinality(p_params) <> 7 * n THEN
    RAISE EXCEPTION 'ratekit: expected 1 or more limits with 7 parameters each' USING ERRCODE = '22023';
  END IF;
  IF p_mode NOT IN ('consume', 'peek', 'refund') THEN
    RAISE EXCEPTION 'ratekit: unknown mode %', p_mode USING ERRCODE = '22023';
  END IF;
  FOR attempt IN 1..3 LOOP
    IF p_mode = 'peek' THEN
      SELECT t.slots INTO stored FROM ${n.table} t WHERE t.namespace = p_namespace AND t.key = p_key;
    ELSE
      SELECT t.slots INTO stored FROM ${n.table} t WHERE t.namespace = p_namespace AND t.key = p_key FOR UPDATE;
    END IF;
    found_row := FOUND;
    -- Read after the lock: the previous holder's writes are never from a later time.
    now_ms := coalesce(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::float8);

    -- Each limit's state without its block, and (in the slot's expires_ms, here) the
    -- blocked-until time it carries, NULL when none.
    states := '{}';
    FOR i IN 1..n LOOP
      state := NULL;
      blk := NULL;
      IF found_row THEN
        FOREACH s IN ARRAY stored LOOP
          IF s.id = p_ids[i] THEN state := s.state; EXIT; END IF;
        END LOOP;
      END IF;
      IF state IS NOT NULL THEN
        m := coalesce(cardinality(state), 0);
        base_len := CASE p_algorithms[i] WHEN 'gcra' THEN 1 WHEN 'delay' THEN 1 WHEN 'fixed-window' THEN 2
          WHEN 'token-bucket' THEN 2 WHEN 'sliding-window' THEN 3 ELSE m - m % 2 END;
        IF m > base_len THEN
          blk := state[m];
          state := CASE WHEN m = 1 THEN '{}'::float8[] ELSE state[1:m - 1] END;
        END IF;
      END IF;
      states := states || ROW(p_ids[i], blk, state)::${n.slotType};
    END LOOP;

    charged := '{}';
    shown := '{}';
    zero := '{}';
    left_blocks := array_fill(0::float8, ARRAY[n]);
    write_ids := '{}';
    write_states := '{}';
    write_until := '{}';
    allowed := true;
    IF p_mode = 'refund' THEN
      -- refundPolicy(): give cost back to every limit (a block that has not ended stays), then
      -- report as a peek at cost 0.
      FOR i IN 1..n LOOP
        o := 7 * (i - 1);
        blk := (states[i]).expires_ms;
        refunded := ${n.refund}(p_algorithms[i], (states[i]).state, p_params[o + 1], p_params[o + 2], p_params[o + 3],
          p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], p_cost, now_ms);
        IF blk IS NOT NULL AND blk > now_ms AND refunded IS NULL THEN
          refunded := (${n.step}(p_algorithms[i], NULL, p_params[o + 1], p_params[o + 2], p_params[o + 3],
            p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms)).next;
        END IF;
        st := ${n.step}(p_algorithms[i], refunded, p_params[o + 1], p_params[o + 2], p_params[o + 3],
          p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms);
        IF blk IS NOT NULL AND blk > now_ms THEN
          IF p_params[o + 7] > 0 THEN st := ${n.blocked}(st, blk - now_ms, 0); left_blocks[i] := blk - now_ms; END IF;
          refunded := refunded || blk;
          write_until := write_until || blk;
        ELSE
          write_until := write_until || NULL::float8;
        END IF;
        charged := charged || st;
        write_ids := write_ids || p_ids[i];
        write_states := write_states || ROW(p_ids[i], NULL, refunded)::${n.slotType};
      END LOOP;
      shown := charged;
    ELSE
      -- stepLimit(): a limit with a block whose state is blocked refuses, whatever its algorithm says.
      FOR i IN 1..n LOOP
        o := 7 * (i - 1);
        blk := (states[i]).expires_ms;
        st := ${n.step}(p_algorithms[i], (states[i]).state, p_params[o + 1], p_params[o + 2], p_params[o + 3],
          p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], p_cost, now_ms);
        IF p_params[o + 7] > 0 AND blk IS NOT NULL AND blk > now_ms THEN
          st := ${n.blocked}(st, blk - now_ms, p_cost);
          left_blocks[i] := blk - now_ms;
        END IF;
        charged := charged || st;
        IF NOT st.allowed THEN allowed := false; END IF;
      END LOOP;
      IF NOT allowed OR p_mode = 'peek' THEN
        FOR i IN 1..n LOOP
          o := 7 * (i - 1);
          blk := (states[i]).expires_ms;
          st := ${n.step}(p_algorithms[i], (states[i]).state, p_params[o + 1], p_params[o + 2], p_params[o + 3],
            p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms);
          IF p_params[o + 7] > 0 AND blk IS NOT NULL AND blk > now_ms THEN st := ${n.blocked}(st, blk - now_ms, 0); END IF;
          zero := zero || st;
        END LOOP;
        shown := zero;
      ELSE
        shown := charged;
      END IF;
      IF p_mode = 'consume' THEN
        FOR i IN 1..n LOOP
          o := 7 * (i - 1);
          block_ms := p_params[o + 7];
          blk := (states[i]).expires_ms;
          IF allowed THEN
            write_ids := write_ids || p_ids[i];
            write_states := write_states || ROW(p_ids[i], NULL, (charged[i]).next)::${n.slotType};
            write_until := write_until || NULL::float8;
          ELSIF NOT (charged[i]).allowed AND block_ms > 0 AND NOT (blk IS NOT NULL AND blk > now_ms) THEN
            -- refusalWrite(): only a limit that itself refused may record a penalty or a block; the
            -- others were never charged. Its state (penalty included) is blocked until now + block_ms,
            -- and the refusal reports the state it leaves (blockedRetry, stepLimit at cost 0).
            state := coalesce((charged[i]).next_if_refused, (zero[i]).next);
            write_ids := write_ids || p_ids[i];
            write_states := write_states || ROW(p_ids[i], NULL, state || (now_ms + block_ms))::${n.slotType};
            write_until := write_until || (now_ms + block_ms);
            left_blocks[i] := (now_ms + block_ms) - now_ms;
            shown[i] := ${n.blocked}(${n.step}(p_algorithms[i], state, p_params[o + 1], p_params[o + 2], p_params[o + 3],
              p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms), block_ms, 0);
            IF (charged[i]).retry_after_ms < block_ms THEN
              st := charged[i];
              st.retry_after_ms := block_ms;
              charged[i] := st;
            END IF;
          ELSIF NOT (charged[i]).allowed AND block_ms = 0 AND (charged[i]).next_if_refused IS NOT NULL THEN
            -- A delay limit's penalty; the refusal reports the wait-until it stores.
            write_ids := write_ids || p_ids[i];
            write_states := write_states || ROW(p_ids[i], NULL, (charged[i]).next_if_refused)::${n.slotType};
            write_until := write_until || NULL::float8;
            shown[i] := ${n.step}(p_algorithms[i], (charged[i]).next_if_refused, p_params[o + 1], p_params[o + 2], p_params[o + 3],
              p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms);
          END IF;
        END LOOP;
      END IF;
    END IF;

    EXIT WHEN cardinality(write_ids) = 0;

    -- The row's new slots: those this decision did not touch, then the states written
    -- (a NULL state is deleted), each with the time it stops mattering.
    next_slots := '{}';
    IF found_row THEN
      FOREACH s IN ARRAY stored LOOP
        IF NOT (s.id = ANY (write_ids)) THEN next_slots := next_slots || s; END IF;
      END LOOP;
    END IF;
    FOR i IN 1..n LOOP
      FOR w IN 1..cardinality(write_states) LOOP
        IF (write_states[w]).id = p_ids[i] AND (write_states[w]).state IS NOT NULL THEN
          o := 7 * (i - 1);
          state := (write_states[w]).state;
          blk := write_until[w];
          IF blk IS NOT NULL THEN
            -- A blocked state stops mattering once both its state and its block have.
            m := cardinality(state);
            state := CASE WHEN m = 1 THEN '{}'::float8[] ELSE state[1:m - 1] END;
            expires := greatest(blk, CASE WHEN cardinality(state) = 0 THEN now_ms ELSE now_ms + ${n.ttl}(p_algorithms[i], state, p_params[o + 1], p_params[o + 2],
              p_params[o + 3], p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms) END);
          ELSE
            expires := now_ms + ${n.ttl}(p_algorithms[i], state, p_params[o + 1], p_params[o + 2], p_params[o + 3],
              p_params[o + 4] = 1, p_params[o + 5], p_params[o + 6], 0, now_ms);
          END IF;
          next_slots := next_slots || ROW(p_ids[i], expires, (write_states[w]).state)::${n.slotType};
        END IF;
      END LOOP;
    END LOOP;
    expires := NULL;
    FOREACH s IN ARRAY next_slots LOOP expires := greatest(expires, s.expires_ms); END LOOP;

    IF cardinality(next_slots) = 0 THEN
      IF found_row THEN DELETE FROM ${n.table} t WHERE t.namespace = p_namespace AND t.key = p_key; END IF;
      EXIT;
    ELSIF found_row THEN
      UPDATE ${n.table} t SET slots = next_slots, expires_at = CASE
          WHEN expires > 9e15 THEN 'infinity'::timestamptz ELSE to_timestamp(ceil(expires / 1000)) END
        WHERE t.namespace = p_namespace AND t.key = p_key;
      EXIT;
    END IF;
    INSERT INTO ${n.table} AS t (namespace, key, slots, expires_at)
      VALUES (p_namespace, p_key, next_slots, CASE WHEN expires > 9e15 THEN 'infinity'::timestamptz ELSE to_timestamp(ceil(expires / 1000)) END)
      ON CONFLICT (namespace, key) DO NOTHING;
    EXIT WHEN FOUND;
    -- Another transaction created the row first: lock it and decide again.
    IF attempt = 3 THEN
      RAISE EXCEPTION 'ratekit: could not lock the row of a new key' USING ERRCODE = '40001';
    END IF;
  END LOOP;

  reply := ARRAY[now_ms, CASE WHEN allowed THEN 1 ELSE 0 END];
  FOR i IN 1..n LOOP
    reply := reply || ARRAY[
      CASE WHEN (charged[i]).allowed THEN 1 ELSE 0 END, (charged[i]).capacity, (charged[i]).retry_after_ms, (charged[i]).delay_ms,
      (shown[i]).tokens_before, (shown[i]).tokens_refilled, (shown[i]).tokens_after, (shown[i]).reset_ms, (shown[i]).next_refill_ms,
      left_blocks[i]];
  END LOOP;
  RETURN reply;
END
`)};

-- The decision function of earlier versions: the same decision, its reply without blocked_ms
-- (9 numbers per limit), for app servers not yet upgraded.
CREATE OR REPLACE FUNCTION ${n.evaluateV1}(p_namespace text, p_key text, p_mode text, p_cost float8, p_now_ms float8,
  p_ids text[], p_algorithms text[], p_params float8[]
) RETURNS float8[] LANGUAGE plpgsql VOLATILE AS ${dollar(`
DECLARE
  full_reply float8[] := ${n.evaluate}(p_namespace, p_key, p_mode, p_cost, p_now_ms, p_ids, p_algorithms, p_params);
  reply float8[] := full_reply[1:2];
BEGIN
  FOR i IN 1..coalesce(cardinality(p_ids), 0) LOOP
    reply := reply || full_reply[3 + 10 * (i - 1):11 + 10 * (i - 1)];
  END LOOP;
  RETURN reply;
END
`)};
`;
}

/**
 * Dollar-quotes `body` with a tag that does not occur in it, so a table or
 * schema name spelled inside the body can never end the quote early.
 */
function dollar(body: string): string {
  let tag = '$fn$';
  for (let i = 1; body.includes(tag); i++) tag = `$fn${i}$`;
  return `${tag}${body}${tag}`;
}

/** A 32-bit FNV-1a hash of `text`, as a signed integer: the advisory lock key of a table's schema script. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash | 0;
}

/**
 * The SQL that drops every object {@link schemaSql} creates, with the data.
 *
 * @throws {RateKitOptionError} when `table` or `schema` is not a usable identifier.
 */
export function dropSchemaSql(options: Pick<SchemaOptions, 'table' | 'schema'> = {}): string {
  const n = schemaNames(options);
  return `DROP FUNCTION IF EXISTS ${n.evaluateV1}(text, text, text, float8, float8, text[], text[], float8[]);
DROP FUNCTION IF EXISTS ${n.evaluate}(text, text, text, float8, float8, text[], text[], float8[]);
DROP FUNCTION IF EXISTS ${n.step}(${LIMIT_SIGNATURE});
DROP FUNCTION IF EXISTS ${n.refund}(${LIMIT_SIGNATURE});
DROP FUNCTION IF EXISTS ${n.ttl}(${LIMIT_SIGNATURE});
DROP FUNCTION IF EXISTS ${n.refill}(float8[], float8, float8, float8, boolean, float8);
DROP FUNCTION IF EXISTS ${n.blocked}(${n.stepType}, float8, float8);
DROP TABLE IF EXISTS ${n.table};
DROP TYPE IF EXISTS ${n.stepType};
DROP TYPE IF EXISTS ${n.slotType};
`;
}
