/**
 * The Deno KV store: a decision reads its limits' states, decides with core's `evaluatePolicy`
 * (the in-memory store's code), and writes the new states in one atomic operation that checks
 * every state read is still the one read (`kv.atomic().check(…).set(…).commit()`).
 *
 * Why it is exact: the commit applies only if no other writer changed any of the states since
 * they were read (their versionstamps), so a decision is applied to exactly the states it was
 * made on, or not at all; a lost race reads again and decides again, at most `maxAttempts`
 * times. A commit (or read) that throws "database is locked" is the same kind of loss: Deno KV's local
 * SQLite backend and a self-hosted `denokv` throw it when another connection holds the write lock, and
 * nothing was written, so it is retried within the same `maxAttempts` (issue 38 §1: treated as a store
 * error at once, it failed up to 388 of 400 contended decisions, and `onStoreError: 'allow'` then admitted
 * four times the limit). Retries wait a random time below an exponentially growing cap ("full jitter"),
 * so contenders spread out instead of colliding again in step, and no decision starves.
 * Deno KV is strongly consistent for these reads and writes (the default consistency),
 * on a local database and on Deno Deploy alike.
 *
 * @module
 */
import {
  algorithms,
  assertInteger,
  assertNonNegative,
  assertObject,
  type Decision,
  type EvaluateRequest,
  evaluatePolicy,
  type LimitState,
  RateKitError,
  RateKitOptionError,
  type RateLimitStore,
  UNCHANGED,
} from '@ratekit/core';

const STORE_NAME = 'deno-kv';

/** A part of a Deno KV key (`Deno.KvKeyPart`). */
export type KvKeyPart = string | number | bigint | boolean | Uint8Array;
/** A Deno KV key (`Deno.KvKey`). */
export type KvKey = readonly KvKeyPart[];

/** The part of `Deno.AtomicOperation` the store uses. */
export interface KvAtomicLike {
  check(...checks: { key: KvKey; versionstamp: string | null }[]): KvAtomicLike;
  set(key: KvKey, value: unknown, options?: { expireIn?: number }): KvAtomicLike;
  delete(key: KvKey): KvAtomicLike;
  commit(): Promise<{ ok: boolean }>;
}

/** The part of a `Deno.Kv` (from `Deno.openKv()`) the store uses. */
export interface DenoKvLike {
  getMany(keys: KvKey[]): Promise<ReadonlyArray<{ key: KvKey; value: unknown; versionstamp: string | null }>>;
  list(selector: { prefix: KvKey }): AsyncIterable<{ key: KvKey }>;
  atomic(): KvAtomicLike;
}

/** Options of {@link denoKvStore}. */
export interface DenoKvStoreOptions {
  /** The database, from `await Deno.openKv()`, owned by the caller (the store never closes it). */
  kv: DenoKvLike;
  /**
   * The first parts of every key the store writes: a state is at `[...prefix, namespace, key, limit id]`.
   * Each part is separate, so no user-controlled key can spell another namespace's.
   * @default ['ratekit']
   */
  prefix?: KvKey;
  /**
   * Attempts per decision when it loses a race: another writer changed its states between the read and the
   * commit, or held the database's lock ("database is locked"). An integer ≥ 1.
   * @default 16
   */
  maxAttempts?: number;
  /**
   * The backoff between attempts, in ms: before attempt n + 1 the store waits a random time in
   * [0, min(`maxMs`, `baseMs` × 2^(n - 1))). `baseMs` and `maxMs` are numbers ≥ 0, `maxMs` ≥ `baseMs`.
   * With the defaults, 16 attempts wait at most about 0.4 s in all.
   * @default { baseMs: 1, maxMs: 32 }
   */
  backoffMs?: { baseMs: number; maxMs: number };
  /**
   * How long, in ms, states outlive the time their algorithm needs them (`expireIn`), to cover the
   * clock skew between the isolates writing them (each decides on its own clock).
   * @default 1_000
   */
  ttlSlackMs?: number;
}

/** The Deno KV store. */
export interface DenoKvStore extends RateLimitStore {
  evaluate(request: EvaluateRequest): Promise<Decision>;
  resetKey(key: string, namespace: string): Promise<void>;
  /** The key of `key`'s state of limit `limitId` in `namespace`. For inspection and tests. */
  keyFor(key: string, namespace: string, limitId: string): KvKey;
}

/** The most states one `getMany` reads (Deno KV's limit). */
const GET_MANY_MAX = 10;
/** The longest sliding-log limit the store accepts: its state, one timestamp per request, must stay far below Deno KV's 64 KiB per value. */
export const MAX_SLIDING_LOG_LIMIT = 4_096;

/**
 * A store on Deno KV (`Deno.openKv()`, locally or on Deno Deploy): every algorithm and every
 * multi-limit policy, all-or-nothing, by atomic check-and-set. Each limit's state is a value of
 * its own, expiring (`expireIn`) when its algorithm no longer needs it plus `ttlSlackMs`.
 *
 * - **Clock:** the caller's (`EvaluateRequest.nowMs`, the limiter's `now`): Deno KV has no clock
 *   a decision can read. Isolates with skewed clocks share state; `ttlSlackMs` covers the skew.
 * - **Contention:** decisions on one key through one store run one after another, so an isolate
 *   never races itself; a decision that loses a race to another isolate or process (a changed state, or
 *   "database is locked") waits a jittered backoff, then reads and decides again; after `maxAttempts`
 *   lost races it rejects (`ERR_RATEKIT_STORE`), and the limiter's `onStoreError` decides.
 * - **Failures:** any Deno KV error rejects with a `RateKitError` of code `ERR_RATEKIT_STORE`,
 *   its `cause` the original.
 *
 * Needs `Deno.openKv` (Deno 1.33+ with `--unstable-kv`; Deno Deploy).
 *
 * @throws {RateKitOptionError} when `kv` is not a Deno KV database, `prefix` is not an array of key parts, `maxAttempts` is not an integer ≥ 1, `backoffMs` is not `{ baseMs, maxMs }` with 0 ≤ `baseMs` ≤ `maxMs`, or `ttlSlackMs` is negative.
 * @example
 * ```ts
 * import { createLimiter } from 'npm:@ratekit/core';
 * import { denoKvStore } from 'npm:@ratekit/deno-kv';
 *
 * const kv = await Deno.openKv();
 * const limiter = createLimiter({
 *   limits: [{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }],
 *   store: denoKvStore({ kv }),
 *   onStoreError: 'deny', // what a request gets if Deno KV fails: refused, never over the limit
 * });
 * Deno.serve(async (request, info) => {
 *   const decision = await limiter.consume(info.remoteAddr.hostname);
 *   return decision.allowed ? new Response('ok') : new Response('Too Many Requests', { status: 429 });
 * });
 * ```
 */
export function denoKvStore(options: DenoKvStoreOptions): DenoKvStore {
  assertObject('options', options);
  const kv = options.kv as Partial<DenoKvLike> | null | undefined;
  if (typeof kv !== 'object' || kv === null || typeof kv.getMany !== 'function' || typeof kv.atomic !== 'function' || typeof kv.list !== 'function') {
    throw new RateKitOptionError('kv', 'a Deno KV database (from Deno.openKv())', options.kv);
  }
  const db = options.kv;
  const prefix = options.prefix ?? ['ratekit'];
  if (!Array.isArray(prefix) || !prefix.every(isKeyPart)) {
    throw new RateKitOptionError('prefix', 'an array of Deno KV key parts (strings, numbers, bigints, booleans, Uint8Arrays)', prefix);
  }
  const maxAttempts = options.maxAttempts ?? 16;
  assertInteger('maxAttempts', maxAttempts, 1);
  const backoff = options.backoffMs ?? { baseMs: 1, maxMs: 32 };
  assertObject('backoffMs', backoff);
  assertNonNegative('backoffMs.baseMs', backoff.baseMs, ' of milliseconds');
  assertNonNegative('backoffMs.maxMs', backoff.maxMs, ' of milliseconds');
  if (backoff.maxMs < backoff.baseMs) throw new RateKitOptionError('backoffMs.maxMs', `a number of milliseconds >= backoffMs.baseMs (${backoff.baseMs})`, backoff.maxMs);
  const ttlSlackMs = options.ttlSlackMs ?? 1_000;
  assertNonNegative('ttlSlackMs', ttlSlackMs, ' of milliseconds');
  const keyFor = (key: string, namespace: string, limitId: string): KvKey => [...prefix, namespace, key, limitId];

  async function decideOnce(request: EvaluateRequest, keys: KvKey[]): Promise<Decision | undefined> {
    const { limits, cost, mode, nowMs } = request;
    const read: { key: KvKey; value: unknown; versionstamp: string | null }[] = [];
    for (let i = 0; i < keys.length; i += GET_MANY_MAX) read.push(...(await db.getMany(keys.slice(i, i + GET_MANY_MAX))));
    const states = read.map((entry, i) => stateOf(entry.value, keys[i]!));
    const { decision, writes } = evaluatePolicy(states, limits, cost, mode, nowMs);
    if (writes.every((write) => write === UNCHANGED)) return decision;
    const operation = db.atomic();
    // Every state read, written or not: the decision depends on all of them.
    operation.check(...read.map((entry, i) => ({ key: keys[i]!, versionstamp: entry.versionstamp })));
    writes.forEach((write, i) => {
      if (write === UNCHANGED) return;
      if (write === undefined) {
        operation.delete(keys[i]!);
        return;
      }
      // Written even when it has just expired (the algorithms read an expired state as none, and the
      // reported figures stay the in-memory store's); Deno KV deletes it after `expireIn`.
      const ttlMs = Math.max(0, algorithms[limits[i]!.algorithm].ttlMs(write, limits[i]!, nowMs));
      operation.set(keys[i]!, write, { expireIn: Math.max(1, Math.ceil(ttlMs + ttlSlackMs)) });
    });
    const { ok } = await operation.commit();
    return ok ? decision : undefined;
  }

  async function decide(request: EvaluateRequest): Promise<Decision> {
    const keys = request.limits.map((limit) => keyFor(request.key, request.namespace, limit.id));
    let locked = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) await sleep(Math.random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 2)));
      let decision: Decision | undefined;
      try {
        decision = await decideOnce(request, keys);
      } catch (error) {
        if (!isLockError(error)) throw storeError(`failed: ${error instanceof Error ? error.message : String(error)}`, error);
        locked++;
      }
      if (decision !== undefined) return decision;
    }
    const lockedNote = locked > 0 ? ` (${locked} of them to "database is locked")` : '';
    throw storeError(`lost ${maxAttempts} compare-and-set races in a row on key ${JSON.stringify(request.key)}${lockedNote} (raise maxAttempts for keys this contended)`, undefined);
  }

  /** The tail of each key's queue of decisions in this store (see `evaluate`). */
  const queues = new Map<string, Promise<void>>();
  function inTurn<T>(id: string, run: () => Promise<T>): Promise<T> {
    const before = queues.get(id);
    const mine = before === undefined ? run() : before.then(run);
    const tail = mine.then(ignore, ignore);
    queues.set(id, tail);
    void tail.then(() => {
      if (queues.get(id) === tail) queues.delete(id);
    });
    return mine;
  }

  return {
    name: STORE_NAME,
    shared: true,
    clock: 'caller',
    keyFor,
    assertSupports(limits, path) {
      limits.forEach((limit, i) => {
        if (limit.algorithm === 'sliding-log' && limit.limit > MAX_SLIDING_LOG_LIMIT) {
          throw new RateKitOptionError(`${path}[${i}].limit`, `at most ${MAX_SLIDING_LOG_LIMIT} for a sliding log on Deno KV (a value holds at most 64 KiB)`, limit.limit);
        }
      });
    },
    evaluate(request) {
      // One after another per key in this store: its own decisions never race each other; the
      // check-and-set settles races with other isolates and processes.
      return inTurn(`${request.namespace.length}:${request.namespace}:${request.key}`, () => decide(request));
    },
    async resetKey(key, namespace) {
      try {
        const operation = db.atomic();
        for await (const entry of db.list({ prefix: [...prefix, namespace, key] })) operation.delete(entry.key);
        await operation.commit();
      } catch (error) {
        throw storeError(`resetKey failed: ${error instanceof Error ? error.message : String(error)}`, error);
      }
    },
  };
}

/** A stored state, checked: an array of finite numbers (what the store writes), else undefined for none. */
function stateOf(value: unknown, key: KvKey): LimitState | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n))) return value as LimitState;
  throw new Error(`The entry ${JSON.stringify(key.map(String))} holds a value this store did not write (is another application using the same key prefix?)`);
}

function ignore(): void {}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether a Deno KV error is SQLite's busy lock ("database is locked", `SQLITE_BUSY`): another connection
 * to the same database was writing. Nothing of this commit was applied, so it is a lost race, not a failure.
 */
function isLockError(error: unknown): boolean {
  return error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);
}

function isKeyPart(part: unknown): part is KvKeyPart {
  return typeof part === 'string' || typeof part === 'number' || typeof part === 'bigint' || typeof part === 'boolean' || part instanceof Uint8Array;
}

function storeError(message: string, cause: unknown): RateKitError {
  return new RateKitError('ERR_RATEKIT_STORE', `The deno-kv store ${message}`, cause === undefined ? undefined : { cause });
}
