import {
  algorithms,
  assertInteger,
  assertNonNegative,
  assertObject,
  assertPositive,
  type Decision,
  type EvaluateRequest,
  evaluatePolicy,
  type LimitState,
  RateKitOptionError,
  type RateLimitStore,
  refundLimit,
  type ResolvedLimit,
  UNCHANGED,
} from '@ratekit/core';
import { MemcachedClient, MemcachedError, type MetaReply, parseServer, replyFlag, type ServerAddress } from './client.js';
import { type BucketEntry, decodeBucket, decodeWindow, encodeBucket, encodeWindow, sameWindow, ttlSeconds, type WindowCount } from './codec.js';
import { isValidPrefix, type KeyBase, KeySpace, MAX_PREFIX_BYTES } from './keys.js';

const STORE_NAME = 'memcached';

/** `ma` is used for integer costs up to this, on limits below {@link MA_MAX_LIMIT}; see codec.ts for the headroom this leaves. */
const MA_MAX_COST = 1_024;
const MA_MAX_LIMIT = 2 ** 20;

/** Options of {@link memcachedStore}. */
export interface MemcachedStoreOptions {
  /**
   * The Memcached servers, `host:port` (or `[ipv6]:port`), as a list or a
   * comma-separated string such as the `MEMCACHED_SERVERS` convention. With
   * several servers each (namespace, key) lives on one of them, chosen by
   * rendezvous hashing; a server that is down fails the keys it holds (the
   * limiter's `onStoreError` decides what those requests get).
   * @default '127.0.0.1:11211'
   */
  servers?: string | readonly string[];
  /**
   * Prepended to every item key, to share a Memcached with other data:
   * printable ASCII without spaces, at most 100 bytes.
   * @default 'ratekit:'
   */
  prefix?: string;
  /**
   * The longest wait, in ms, for one Memcached reply (connecting included),
   * and for a whole decision that keeps losing compare-and-set races. A
   * connection silent for that long is closed and opened again on the next
   * command. Keep it at or below the limiter's `storeTimeoutMs`.
   * @default 1_000
   */
  timeoutMs?: number;
  /**
   * Connections per server. Each (namespace, key) always uses the same one,
   * so its commands arrive in order; more connections spread the load over
   * Memcached's worker threads.
   * @default 2
   */
  connections?: number;
  /**
   * After a failed connection attempt, commands to that server fail at once
   * for this many ms instead of each waiting on a new attempt.
   * @default 100
   */
  reconnectDelayMs?: number;
  /**
   * Attempts per decision when compare-and-set loses to a concurrent writer
   * of the same key, with a short random back-off between them. Decisions
   * for one key from the same store instance are queued locally instead of
   * racing, so losses only come from other processes.
   * @default 50
   */
  maxAttempts?: number;
  /**
   * How long, in ms, items are kept after their state has become idle
   * (equivalent to no state at all). Cover the clock skew between your app
   * servers: a server whose clock is behind still reads a state another one
   * wrote until this slack runs out. Tests that drive a fixed clock far
   * ahead of real time raise it.
   * @default 2_000
   */
  ttlSlackMs?: number;
}

/** The Memcached store. */
export interface MemcachedStore extends RateLimitStore {
  evaluate(request: EvaluateRequest): Promise<Decision>;
  /**
   * Deletes the key's items in `namespace`: its bucket item, and the window
   * counters of every fixed- or sliding-window limit this store instance has
   * evaluated in that namespace (Memcached cannot list keys, and the call
   * does not carry the limits).
   */
  resetKey(key: string, namespace: string, limits?: readonly ResolvedLimit[]): Promise<void>;
  /** Waits for commands in flight (at most `timeoutMs`) and closes the connections. */
  dispose(): Promise<void>;
  /** The prefix of every item key, as configured. */
  readonly prefix: string;
  /** The servers, as parsed. */
  readonly servers: readonly ServerAddress[];
}

/**
 * A store on Memcached (1.6 or later, for the meta protocol), with a small
 * built-in client. Memcached runs no scripts, so each decision is built from
 * its atomic primitives:
 *
 * - **Window counters** (`fixed-window`, and the two per-window counters of
 *   `sliding-window`) are incremented in place with meta arithmetic (`ma`),
 *   created with add (`ms … ME`) on a key's first hit in a window, and, when
 *   the increment overshoots the limit, taken back. A hot key costs one round
 *   trip per admitted request and no retries.
 * - **Everything else** (`token-bucket`, `gcra`, `delay`, `sliding-log`,
 *   and any limit with `blockDurationMs`, whose blocked-until time is stored
 *   after its state) lives in one item per (namespace, key) holding all those limits' states,
 *   updated by compare-and-set (`mg … c` then `ms … C<cas>`) around
 *   `evaluatePolicy`, retried when a concurrent writer got there first.
 * - **Multi-limit policies** stay all-or-nothing: window counters are charged
 *   first (increment, then check), the compare-and-set item is written last,
 *   and if any limit refuses or the write loses a race, the increments are
 *   taken back. Meanwhile they count, so concurrent requests may briefly see
 *   a fuller counter and be refused; a limit is never exceeded.
 * - **Clock.** Memcached has no clock a client can read, so decisions use the
 *   caller's clock (`clock: 'caller'`, the limiter's `now`): keep app servers
 *   on NTP. Memcached TTLs (seconds, rounded up, plus one) only remove idle items.
 * - **Keys.** `<prefix><sha256(namespace, key)>.<kind>[.<sha256(limit id)>]`,
 *   base64url and length-prefixed, so any user key is safe and no key can
 *   reach another namespace.
 * - **Failures** reject with a {@link MemcachedError}; the limiter's
 *   `onStoreError` and `storeTimeoutMs` decide what the request gets. The
 *   client reconnects by itself when a server comes back.
 *
 * Memcached may evict items under memory pressure (LRU), which resets those
 * keys' limits: size it, or give the limits their own instance.
 *
 * @throws {RateKitOptionError} when an option is out of range (each names the option).
 * @example
 * ```ts
 * import { createLimiter } from '@ratekit/core';
 * import { memcachedStore } from '@ratekit/memcached';
 *
 * const limiter = createLimiter({
 *   limits: [{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, { limit: 1_000, windowMs: 3_600_000 }],
 *   store: memcachedStore({ servers: process.env.MEMCACHED_SERVERS ?? '127.0.0.1:11211' }),
 *   onStoreError: 'allow',
 *   storeTimeoutMs: 200,
 * });
 * const decision = await limiter.consume('user:42');
 * ```
 */
export function memcachedStore(options: MemcachedStoreOptions = {}): MemcachedStore {
  assertObject('options', options);
  const servers = parseServers(options.servers ?? '127.0.0.1:11211');
  const prefix = options.prefix ?? 'ratekit:';
  if (!isValidPrefix(prefix)) {
    throw new RateKitOptionError('prefix', `printable ASCII without spaces, at most ${MAX_PREFIX_BYTES} characters`, prefix);
  }
  const timeoutMs = options.timeoutMs ?? 1_000;
  assertPositive('timeoutMs', timeoutMs, ' of milliseconds');
  const connections = options.connections ?? 2;
  assertInteger('connections', connections, 1);
  const reconnectDelayMs = options.reconnectDelayMs ?? 100;
  assertNonNegative('reconnectDelayMs', reconnectDelayMs, ' of milliseconds');
  const maxAttempts = options.maxAttempts ?? 50;
  assertInteger('maxAttempts', maxAttempts, 1);
  const ttlSlackMs = options.ttlSlackMs ?? 2_000;
  assertNonNegative('ttlSlackMs', ttlSlackMs, ' of milliseconds');

  const client = new MemcachedClient({ servers, timeoutMs, connections, reconnectDelayMs });
  const keys = new KeySpace(prefix);
  const locks = new Map<string, Promise<void>>();
  /** Window limits seen per namespace, so resetKey can find their counters. */
  const windowLimits = new Map<string, Map<string, 'f' | 's'>>();

  function remember(namespace: string, limit: ResolvedLimit): void {
    if (!counted(limit)) return;
    let ids = windowLimits.get(namespace);
    if (ids === undefined) {
      if (windowLimits.size >= 10_000) windowLimits.delete(windowLimits.keys().next().value!);
      ids = new Map();
      windowLimits.set(namespace, ids);
    }
    if (!ids.has(limit.id) && ids.size < 1_000) ids.set(limit.id, limit.algorithm === 'fixed-window' ? 'f' : 's');
  }

  const io: Io = {
    send: (route, command, data) => client.send(route, command, data),
    maxAttempts,
    timeoutMs,
    ttlSlackMs,
  };

  async function evaluate(request: EvaluateRequest): Promise<Decision> {
    for (const limit of request.limits) remember(request.namespace, limit);
    const plan = planFor(keys, request);
    if (request.mode === 'refund') return refund(io, plan, request);
    const run = () => retrying(io, () => attempt(io, plan, request));
    // Several items to keep all-or-nothing: queue this process's decisions for the key (see the README).
    return plan.lockKey === undefined ? run() : withLock(locks, plan.lockKey, run);
  }

  return {
    name: STORE_NAME,
    shared: true,
    clock: 'caller',
    prefix,
    servers,
    evaluate,
    async resetKey(key, namespace, limits) {
      const base = keys.base(namespace, key);
      const doomed = [keys.item(base, 'b')];
      // The caller's limits, when given, reach counters this instance has never evaluated (e.g. after a restart).
      for (const limit of limits ?? []) remember(namespace, limit);
      for (const [id, kind] of windowLimits.get(namespace) ?? []) {
        if (kind === 'f') doomed.push(keys.item(base, 'f', id));
        else doomed.push(keys.item(base, 's0', id), keys.item(base, 's1', id));
      }
      const replies = await Promise.all(doomed.map((item) => client.send(base.route, `md ${item}`)));
      for (const reply of replies) if (reply.code !== 'HD' && reply.code !== 'NF') throw unexpected('md', reply);
    },
    dispose: () => client.close(),
  };
}

/** What an attempt needs from the store: the connection and the retry bounds. */
interface Io {
  send(route: number, command: string, data?: string): Promise<MetaReply>;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly ttlSlackMs: number;
}

/** Where each limit of a request lives. */
type LimitPlan =
  | { readonly kind: 'fixed'; readonly limit: ResolvedLimit; readonly key: string }
  | { readonly kind: 'sliding'; readonly limit: ResolvedLimit; readonly startMs: number; readonly curKey: string; readonly otherKey: string }
  | { readonly kind: 'bucket'; readonly limit: ResolvedLimit };

interface Plan {
  readonly route: number;
  readonly limits: readonly LimitPlan[];
  /** The bucket item's key, when the policy has a compare-and-set limit. */
  readonly bucketKey: string | undefined;
  /** Set when a decision spans several items: decisions for the key in this process then wait for one another. */
  readonly lockKey: string | undefined;
}

function planFor(keys: KeySpace, request: EvaluateRequest): Plan {
  const base: KeyBase = keys.base(request.namespace, request.key);
  let bucketKey: string | undefined;
  const limits = request.limits.map((limit): LimitPlan => {
    if (!counted(limit)) {
      bucketKey ??= keys.item(base, 'b');
      return { kind: 'bucket', limit };
    }
    if (limit.algorithm === 'fixed-window') return { kind: 'fixed', limit, key: keys.item(base, 'f', limit.id) };
    if (limit.algorithm === 'sliding-window') {
      const index = Math.floor(request.nowMs / limit.windowMs);
      const parity = ((index % 2) + 2) % 2;
      return {
        kind: 'sliding',
        limit,
        startMs: index * limit.windowMs,
        curKey: keys.item(base, parity === 0 ? 's0' : 's1', limit.id),
        otherKey: keys.item(base, parity === 0 ? 's1' : 's0', limit.id),
      };
    }
    bucketKey ??= keys.item(base, 'b');
    return { kind: 'bucket', limit };
  });
  const lockKey = bucketKey !== undefined || limits.length > 1 ? base.base : undefined;
  return { route: base.route, limits, bucketKey, lockKey };
}

/**
 * True when a limit lives in window counters (`ma`): a fixed or sliding window
 * without `blockDurationMs`. A limit with a block keeps its state, blocked-until
 * time included, in the compare-and-set item, whatever its algorithm, so its
 * decision stays one atomic compare-and-set.
 */
function counted(limit: ResolvedLimit): boolean {
  return limit.blockDurationMs === 0 && (limit.algorithm === 'fixed-window' || limit.algorithm === 'sliding-window');
}

/** A window counter as one attempt sees it. */
interface Counter {
  readonly key: string;
  /** The content now stored, our own increment included. */
  readonly content: WindowCount | undefined;
  readonly cas: string | undefined;
  /** What this attempt's `ma` added (0 when it only read). */
  readonly charged: number;
}

/** The bucket item as one attempt sees it. */
interface Bucket {
  readonly key: string;
  readonly entries: Map<string, BucketEntry>;
  readonly found: boolean;
  readonly cas: string | undefined;
}

/** How to take back one write or increment of an attempt. */
interface Undo {
  readonly key: string;
  /** Restore this (undefined: delete) if the item still has the CAS value our write left. */
  readonly restore: WindowCount | undefined;
  readonly cas: string | undefined;
  /** Otherwise, if the item still holds the window starting at `startMs`, take `amount` off its count. */
  readonly startMs: number;
  readonly amount: number;
  /** The TTL, in ms from the decision, of a counter holding a window that starts at `startMs`. */
  readonly ttlMsFor: (startMs: number) => number;
}

const CONFLICT = Symbol('conflict');

/** Runs `once` until it does not report a lost race, with a short random back-off. */
async function retrying<T>(io: Io, once: () => Promise<T | typeof CONFLICT>): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const result = await once();
    if (result !== CONFLICT) return result;
    if (attempt >= io.maxAttempts || Date.now() - started >= io.timeoutMs) {
      throw new MemcachedError('ERR_MEMCACHED_CONTENTION', `Gave up after ${attempt} attempts in ${Date.now() - started} ms: concurrent writers kept changing the same key`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(20, 2 ** attempt)));
  }
}

/** One attempt at a consume or peek: read (charging the window counters that can be), decide, write. */
async function attempt(io: Io, plan: Plan, request: EvaluateRequest): Promise<Decision | typeof CONFLICT> {
  const { limits, cost, mode, nowMs } = request;
  const charge = (limit: ResolvedLimit) => (mode === 'consume' && canIncrement(limit, cost) ? cost : 0);
  const counterReads: Array<Promise<Counter>> = [];
  /** For each counter read, the TTL of a counter holding a window that starts at `startMs`. */
  const ttls: Array<(startMs: number) => number> = [];
  for (const p of plan.limits) {
    const W = p.limit.windowMs;
    if (p.kind === 'fixed') {
      counterReads.push(readCounter(io, plan.route, p.key, charge(p.limit)));
      ttls.push((startMs) => startMs + W - nowMs);
    } else if (p.kind === 'sliding') {
      counterReads.push(readCounter(io, plan.route, p.curKey, charge(p.limit)), readCounter(io, plan.route, p.otherKey, 0));
      const ttlMsFor = (startMs: number) => startMs + 2 * W - nowMs;
      ttls.push(ttlMsFor, ttlMsFor);
    }
  }
  const bucketRead = plan.bucketKey === undefined ? undefined : readBucket(io, plan.route, plan.bucketKey);
  const [read, bucketResult] = await Promise.all([Promise.allSettled(counterReads), bucketRead === undefined ? undefined : Promise.allSettled([bucketRead])]);
  const failure = [...read, ...(bucketResult ?? [])].find((result) => result.status === 'rejected');
  if (failure !== undefined) {
    // Take back what the other reads charged before failing.
    const undos = read.flatMap((result, i): Undo[] => {
      if (result.status !== 'fulfilled' || result.value.charged === 0) return [];
      const counter = result.value;
      return [{ key: counter.key, restore: previous(counter), cas: counter.cas, startMs: counter.content!.startMs, amount: counter.charged, ttlMsFor: ttls[i]! }];
    });
    await takeAllBack(io, plan.route, undos);
    throw failure.reason;
  }
  const counters = read.map((result) => (result as PromiseFulfilledResult<Counter>).value);
  const bucket = bucketResult === undefined ? undefined : (bucketResult[0] as PromiseFulfilledResult<Bucket>).value;

  // The states as they were before this attempt's own increments.
  const states: Array<LimitState | undefined> = [];
  let c = 0;
  for (const p of plan.limits) {
    if (p.kind === 'fixed') {
      const before = previous(counters[c++]!);
      states.push(before === undefined ? undefined : [before.startMs, before.count]);
    } else if (p.kind === 'sliding') {
      states.push(slidingState(previous(counters[c]!), counters[c + 1]!.content, p.limit.windowMs));
      c += 2;
    } else states.push(bucket!.entries.get(p.limit.id)?.state);
  }
  const { decision, writes } = evaluatePolicy(states, limits, cost, mode, nowMs);
  if (mode === 'peek') return decision;

  // What to take back if this attempt does not stand, and the counter writes that commit it.
  const charges: Array<Undo | undefined> = [];
  const commits: Commit[] = [];
  c = 0;
  plan.limits.forEach((p, i) => {
    if (p.kind === 'bucket') return;
    const write = writes[i];
    const W = p.limit.windowMs;
    const ttlMsFor = ttls[c]!;
    const counter = counters[c]!;
    const before = previous(counter);
    const charged: Undo | undefined = counter.charged > 0 ? { key: counter.key, restore: before, cas: counter.cas, startMs: counter.content!.startMs, amount: counter.charged, ttlMsFor } : undefined;
    if (write === UNCHANGED) {
      charges.push(charged);
      c += p.kind === 'fixed' ? 1 : 2;
      return;
    }
    const desired: WindowCount | undefined = write === undefined ? undefined : { startMs: write[0]!, count: write[p.kind === 'fixed' ? 1 : 2]! };
    if (sameWindow(desired, counter.content)) charges.push(charged);
    else {
      const amount = desired === undefined ? 0 : before !== undefined && before.startMs === desired.startMs ? desired.count - before.count : desired.count;
      commits.push({ counter, desired, ttlMsFor, charged, undo: { key: counter.key, restore: before, startMs: desired?.startMs ?? 0, amount, ttlMsFor } });
    }
    if (p.kind === 'sliding') {
      // The other slot must still read as the state's previous count.
      const other = counters[c + 1]!;
      const wanted = write === undefined ? undefined : otherSlotFor(write, other.content, W);
      if (wanted !== KEEP) {
        commits.push({ counter: other, desired: wanted, ttlMsFor, charged: undefined, undo: { key: other.key, restore: other.content, startMs: 0, amount: 0, ttlMsFor } });
      }
      c += 2;
    } else c += 1;
  });
  const undos = charges.filter((undo) => undo !== undefined);
  const bucketWrite = bucket === undefined ? undefined : nextBucket(plan, bucket, writes, nowMs);

  if (!decision.allowed) {
    // A refusal charges nothing: take the increments back. Only a delay limit's penalty is written.
    const [, written] = await Promise.all([takeAllBack(io, plan.route, undos), bucketWrite === undefined ? true : writeBucket(io, plan.route, bucket!, bucketWrite, nowMs)]);
    return written ? decision : CONFLICT;
  }

  try {
    if (commits.length > 0) {
      const results = await Promise.allSettled(
        commits.map(({ counter, desired, ttlMsFor }) => writeCounter(io, plan.route, target(counter), desired, desired === undefined ? 0 : ttlMsFor(desired.startMs))),
      );
      let lost = false as boolean; // set inside the callback below: typed wide so flow analysis does not pin it to false
      let failed: PromiseRejectedResult | undefined;
      results.forEach((result, i) => {
        const commit = commits[i]!;
        if (result.status === 'fulfilled' && result.value !== CONFLICT) {
          undos.push({ ...commit.undo, cas: result.value });
          return;
        }
        if (result.status === 'rejected') failed ??= result;
        lost = true;
        // Our increment, if any, is still in the item: someone else changed it, or the write failed.
        if (commit.charged !== undefined) undos.push(commit.charged);
      });
      if (failed !== undefined) throw failed.reason;
      if (lost) {
        await takeAllBack(io, plan.route, undos);
        return CONFLICT;
      }
    }
    if (bucketWrite !== undefined && !(await writeBucket(io, plan.route, bucket!, bucketWrite, nowMs))) {
      await takeAllBack(io, plan.route, undos);
      return CONFLICT;
    }
  } catch (error) {
    await takeAllBack(io, plan.route, undos);
    throw error;
  }
  return decision;
}

/** A counter write that commits an admitted decision. */
interface Commit {
  readonly counter: Counter;
  readonly desired: WindowCount | undefined;
  readonly ttlMsFor: (startMs: number) => number;
  /** This attempt's increment of the same counter, to take back if the write loses. */
  readonly charged: Undo | undefined;
  /** How to take the write back once it has succeeded (its CAS value is added then). */
  readonly undo: Omit<Undo, 'cas'>;
}

/** Gives back a refund on each limit, each with its own compare-and-set loop, then reports as core's refund does. */
async function refund(io: Io, plan: Plan, request: EvaluateRequest): Promise<Decision> {
  const { cost, nowMs } = request;
  const states = new Array<LimitState | undefined>(plan.limits.length);
  const groups: Array<Promise<void>> = [];
  plan.limits.forEach((p, i) => {
    if (p.kind === 'bucket') return;
    const algorithm = algorithms[p.limit.algorithm];
    groups.push(
      retrying(io, async () => {
        if (p.kind === 'fixed') {
          const counter = await readCounter(io, plan.route, p.key, 0);
          const state = counter.content === undefined ? undefined : [counter.content.startMs, counter.content.count];
          const refunded = algorithm.refund(state, p.limit, cost, nowMs);
          const desired = refunded === undefined ? undefined : { startMs: refunded[0]!, count: refunded[1]! };
          if (!sameWindow(desired, counter.content)) {
            const ttlMs = desired === undefined ? 0 : desired.startMs + p.limit.windowMs - nowMs;
            if ((await writeCounter(io, plan.route, target(counter), desired, ttlMs)) === CONFLICT) return CONFLICT;
          }
          states[i] = state;
          return undefined;
        }
        const [cur, other] = await Promise.all([readCounter(io, plan.route, p.curKey, 0), readCounter(io, plan.route, p.otherKey, 0)]);
        const state = slidingState(cur.content, other.content, p.limit.windowMs);
        const refunded = algorithm.refund(state, p.limit, cost, nowMs);
        const desired = refunded === undefined ? undefined : { startMs: refunded[0]!, count: refunded[2]! };
        if (!sameWindow(desired, cur.content)) {
          const ttlMs = desired === undefined ? 0 : desired.startMs + 2 * p.limit.windowMs - nowMs;
          if ((await writeCounter(io, plan.route, target(cur), desired, ttlMs)) === CONFLICT) return CONFLICT;
        }
        states[i] = state;
        return undefined;
      }),
    );
  });
  if (plan.bucketKey !== undefined) {
    const key = plan.bucketKey;
    groups.push(
      retrying(io, async () => {
        const bucket = await readBucket(io, plan.route, key);
        const writes: Array<LimitState | undefined | typeof UNCHANGED> = plan.limits.map(() => UNCHANGED);
        plan.limits.forEach((p, i) => {
          if (p.kind !== 'bucket') return;
          const state = bucket.entries.get(p.limit.id)?.state;
          states[i] = state;
          writes[i] = refundLimit(state, p.limit, cost, nowMs);
        });
        const next = nextBucket(plan, bucket, writes, nowMs);
        if (next !== undefined && !(await writeBucket(io, plan.route, bucket, next, nowMs))) return CONFLICT;
        return undefined;
      }),
    );
  }
  await Promise.all(groups);
  return evaluatePolicy(states, request.limits, cost, 'refund', nowMs).decision;
}

/** True when `ma` can charge this cost to this limit's counter (see codec.ts for the bounds). */
function canIncrement(limit: ResolvedLimit, cost: number): boolean {
  return Number.isInteger(cost) && cost >= 1 && cost <= MA_MAX_COST && cost <= limit.limit && limit.limit < MA_MAX_LIMIT;
}

/** Reads a counter, first adding `charge` to it with `ma` when it is not 0. */
async function readCounter(io: Io, route: number, key: string, charge: number): Promise<Counter> {
  if (charge > 0) {
    const reply = await io.send(route, `ma ${key} D${charge} v c`);
    if (reply.code === 'VA') return { key, content: decodeWindow(reply.value!, key), cas: replyFlag(reply, 'c'), charged: charge };
    if (reply.code === 'NF') return { key, content: undefined, cas: undefined, charged: 0 };
    // A non-numeric (text) counter: read it and go on with compare-and-set.
    if (reply.code !== 'CLIENT_ERROR') throw unexpected('ma', reply);
  }
  const reply = await io.send(route, `mg ${key} v c`);
  if (reply.code === 'VA') return { key, content: decodeWindow(reply.value!, key), cas: replyFlag(reply, 'c'), charged: 0 };
  if (reply.code === 'EN') return { key, content: undefined, cas: undefined, charged: 0 };
  throw unexpected('mg', reply);
}

/** The counter's content before this attempt's own increment. */
function previous(counter: Counter): WindowCount | undefined {
  if (counter.content === undefined) return undefined;
  if (counter.charged === 0) return counter.content;
  const count = counter.content.count - counter.charged;
  if (count < 0) throw new MemcachedError('ERR_MEMCACHED_VALUE', `The counter ${counter.key} went below its own increment: it overflowed`);
  return { startMs: counter.content.startMs, count };
}

/**
 * core's sliding-window state `[windowStartMs, previousCount, currentCount]`
 * from the two slots: the newer window is the state's window, and the other
 * slot is its previous count only if it holds the window just before.
 */
function slidingState(a: WindowCount | undefined, b: WindowCount | undefined, windowMs: number): LimitState | undefined {
  if (a === undefined && b === undefined) return undefined;
  const [newer, older] = b === undefined || (a !== undefined && a.startMs > b.startMs) ? [a!, b] : [b, a];
  const before = older !== undefined && older.startMs === newer.startMs - windowMs ? older.count : 0;
  return [newer.startMs, before, newer.count];
}

const KEEP = Symbol('keep');

/** What the other slot must hold for the slots to read as `state`, or KEEP when it already does. */
function otherSlotFor(state: LimitState, other: WindowCount | undefined, windowMs: number): WindowCount | undefined | typeof KEEP {
  const [startMs, previousCount] = state as [number, number, number];
  const fits = other === undefined || other.startMs < startMs;
  const reads = other !== undefined && other.startMs === startMs - windowMs ? other.count : 0;
  if (fits && reads === previousCount) return KEEP;
  return previousCount > 0 ? { startMs: startMs - windowMs, count: previousCount } : undefined;
}

/** Where a counter write goes: the key, and the CAS value it must still have (undefined: it must not exist). */
interface Target {
  readonly key: string;
  readonly cas: string | undefined;
}

function target(counter: Counter): Target {
  return { key: counter.key, cas: counter.content === undefined ? undefined : counter.cas };
}

/**
 * Writes a counter with compare-and-set: `ms … C<cas>` (or `md … C<cas>` to
 * delete it), or add (`ms … ME`) when it must not exist. Returns the new CAS
 * value, or CONFLICT when another writer got there first.
 */
async function writeCounter(io: Io, route: number, to: Target, desired: WindowCount | undefined, ttlMs: number): Promise<string | typeof CONFLICT> {
  if (desired === undefined) {
    if (to.cas === undefined) return '';
    const reply = await io.send(route, `md ${to.key} C${to.cas}`);
    if (reply.code === 'HD') return '';
    if (reply.code === 'EX' || reply.code === 'NF') return CONFLICT;
    throw unexpected('md', reply);
  }
  const value = encodeWindow(desired);
  const mode = to.cas === undefined ? 'ME' : `C${to.cas}`;
  const reply = await io.send(route, `ms ${to.key} ${Buffer.byteLength(value)} T${ttlSeconds(ttlMs + io.ttlSlackMs)} c ${mode}`, value);
  if (reply.code === 'HD') return replyFlag(reply, 'c') ?? '';
  if (reply.code === 'EX' || reply.code === 'NS' || reply.code === 'NF') return CONFLICT;
  throw unexpected('ms', reply);
}

/**
 * Takes back one increment or write: restores the item if nobody wrote it
 * since, else takes `amount` off the count of the same window, with
 * compare-and-set. Best effort: a failure leaves the count high (refusing
 * more, never admitting more).
 */
async function takeBack(io: Io, route: number, undo: Undo): Promise<void> {
  try {
    if (undo.cas !== undefined && undo.cas !== '') {
      const ttlMs = undo.restore === undefined ? 0 : undo.ttlMsFor(undo.restore.startMs);
      if ((await writeCounter(io, route, { key: undo.key, cas: undo.cas }, undo.restore, ttlMs)) !== CONFLICT) return;
    }
    if (undo.amount === 0) return;
    for (let i = 0; i < 20; i++) {
      const counter = await readCounter(io, route, undo.key, 0);
      if (counter.content === undefined || counter.content.startMs !== undo.startMs) return;
      const desired = { startMs: undo.startMs, count: Math.max(0, counter.content.count - undo.amount) };
      if ((await writeCounter(io, route, target(counter), desired, undo.ttlMsFor(undo.startMs))) !== CONFLICT) return;
    }
  } catch {
    // Best effort, see above.
  }
}

async function takeAllBack(io: Io, route: number, undos: readonly Undo[]): Promise<void> {
  await Promise.all(undos.map((undo) => takeBack(io, route, undo)));
}

async function readBucket(io: Io, route: number, key: string): Promise<Bucket> {
  const reply = await io.send(route, `mg ${key} v c`);
  if (reply.code === 'VA') return { key, entries: decodeBucket(reply.value!, key), found: true, cas: replyFlag(reply, 'c') };
  if (reply.code === 'EN') return { key, entries: new Map(), found: false, cas: undefined };
  throw unexpected('mg', reply);
}

/** The bucket item's entries after `writes`, or undefined when nothing changes. Drops other limits' expired states. Does not mutate. */
function nextBucket(plan: Plan, bucket: Bucket, writes: ReadonlyArray<LimitState | undefined | typeof UNCHANGED>, nowMs: number): Map<string, BucketEntry> | undefined {
  let changed = false;
  const next = new Map(bucket.entries);
  const inRequest = new Set<string>();
  plan.limits.forEach((p, i) => {
    if (p.kind !== 'bucket') return;
    inRequest.add(p.limit.id);
    const write = writes[i];
    if (write === UNCHANGED) return;
    changed = true;
    if (write === undefined) next.delete(p.limit.id);
    else next.set(p.limit.id, { expiresAtMs: nowMs + algorithms[p.limit.algorithm].ttlMs(write, p.limit, nowMs), state: write });
  });
  for (const [id, entry] of bucket.entries) {
    if (!inRequest.has(id) && entry.expiresAtMs <= nowMs) {
      next.delete(id);
      changed = true;
    }
  }
  return changed ? next : undefined;
}

/** Writes the bucket item with compare-and-set (add when absent, delete when empty). False when another writer got there first. */
async function writeBucket(io: Io, route: number, bucket: Bucket, entries: ReadonlyMap<string, BucketEntry>, nowMs: number): Promise<boolean> {
  if (entries.size === 0) {
    if (!bucket.found) return true;
    const reply = await io.send(route, `md ${bucket.key} C${bucket.cas}`);
    if (reply.code === 'HD') return true;
    if (reply.code === 'EX' || reply.code === 'NF') return false;
    throw unexpected('md', reply);
  }
  let expiresAtMs = -Infinity;
  for (const entry of entries.values()) expiresAtMs = Math.max(expiresAtMs, entry.expiresAtMs);
  const value = encodeBucket(entries);
  const mode = bucket.found ? `C${bucket.cas}` : 'ME';
  const reply = await io.send(route, `ms ${bucket.key} ${Buffer.byteLength(value)} T${ttlSeconds(expiresAtMs - nowMs + io.ttlSlackMs)} ${mode}`, value);
  if (reply.code === 'HD') return true;
  if (reply.code === 'EX' || reply.code === 'NS' || reply.code === 'NF') return false;
  throw unexpected('ms', reply);
}

/** Runs `run` after every earlier holder of `key` in this process is done. */
async function withLock<T>(locks: Map<string, Promise<void>>, key: string, run: () => Promise<T>): Promise<T> {
  const before = locks.get(key);
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = before === undefined ? mine : before.then(() => mine);
  locks.set(key, tail);
  try {
    if (before !== undefined) await before;
    return await run();
  } finally {
    release();
    if (locks.get(key) === tail) locks.delete(key);
  }
}

function unexpected(command: string, reply: MetaReply): MemcachedError {
  return new MemcachedError('ERR_MEMCACHED_PROTOCOL', `Unexpected reply to ${command}: ${reply.code} ${reply.flags.join(' ')}`.trimEnd());
}

function parseServers(option: unknown): ServerAddress[] {
  const list = typeof option === 'string' ? option.split(',') : option;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string')) {
    throw new RateKitOptionError('servers', 'a non-empty list of "host:port" strings, or one comma-separated string', option);
  }
  return list.map((text: string, i) => {
    try {
      return parseServer(text);
    } catch {
      throw new RateKitOptionError(`servers[${i}]`, 'a "host:port", "[ipv6]:port" or "host" string', text);
    }
  });
}
