import { EPSILON } from './algorithms/tolerance.js';
import type { Decision, LimitDecision } from './decision.js';
import { RateKitOptionError } from './errors.js';
import type { ResolvedLimit } from './limit.js';
import { LruIndex } from './stores/lru.js';
import type { RateLimitStore } from './stores/types.js';
import { assertInteger, assertKnownKeys } from './validate.js';

/**
 * Refusals answered in-process: a limiter on a shared (remote) store keeps
 * the keys it has just seen refused, and until when, and refuses them again
 * without calling the store until then (what @upstash/ratelimit's
 * `ephemeralCache` and rate-limiter-flexible's `inMemoryBlockOnConsumed` do).
 *
 * It never changes a decision. An entry holds the store's refusal of one
 * (key, limits, cost), and answers only the same limits and the same cost
 * (a refusal for cost 5 says nothing about cost 1, and a larger cost may have
 * another binding limit and a later `Retry-After`), only while the store
 * would give that same refusal again:
 *
 * - until the refusal's `retryAfterMs`, and no later than the earliest
 *   `retryAfterMs` of the limits that refused, so every limit that refused
 *   still refuses;
 * - no later than the first moment any limit's `remaining` could change
 *   (a whole token credited: for the buckets `(⌊tokens⌋ + 1 − tokens) ×
 *   emissionIntervalMs`; for the sliding-window counter the same at its
 *   fastest decay, `limit / windowMs`; for the fixed window, the sliding log
 *   and interval refill, the next refill);
 * - for a limit that refused because it is blocked (`blockDurationMs`):
 *   no later than the block's end, its `blockedMs` (after it, a refused
 *   request would block the key again: a write, and a later `Retry-After`).
 *   During the block the limit refuses every request, writes nothing and
 *   reports no tokens, so its `remaining` cannot change before then;
 * - minus {@link REFUSAL_CACHE_MARGIN_MS}, which absorbs float rounding.
 *
 * It is not cached when the store's answer could differ on the next call
 * for another reason: a refusal by a limit with `blockDurationMs` that is
 * not blocked (a peek's refusal, whose consume would block the key) or whose
 * decision does not say how long its block has left (no `blockedMs`: a store
 * that does not report it), by a delay limit with `refusedPenaltyCapMs`
 * (every refused request adds to its penalty, and a block's first refusal
 * reports the wait before the penalty), a `retryAfterMs` of `Infinity` (a
 * cost above the capacity, which would never expire), or two refusing
 * limits within 1 ms of each other (which one binds could change).
 *
 * Deadlines are local: the limiter's clock read before the store was asked,
 * plus the durations the store answered. The store decided after that
 * reading, so a local deadline is never later than the store's own, whatever
 * the skew between the two clocks.
 *
 * Requests in flight: a refusal answered after a refund or reset of this
 * limiter that was sent later is not kept (see {@link RefusalCache.generation}).
 * One answered after an admission sent later (here or elsewhere) is kept:
 * it is still a refusal, and the admission can only make the store's next
 * answer a later one, so the kept one ends no later than the store's would.
 *
 * Bounded like the memory store: at most `maxKeys` entries in an
 * {@link LruIndex} (least recently used evicted first), no timer, an expired
 * entry dropped when it is next read. Eviction only sends that key's next
 * request to the store, which refuses it as before: filling the cache can
 * cost store calls but never admit a request the store would refuse.
 */

/** How many keys a limiter's refusal cache holds by default. */
export const DEFAULT_REFUSAL_CACHE_KEYS = 10_000;

/** An entry expires this long before the store's deadline, so float rounding in `retryAfterMs` cannot refuse a request the store admits. */
export const REFUSAL_CACHE_MARGIN_MS = 1;

/** The `refusalCache` option of `createLimiter` once validated: off, or on with this many keys. */
export type RefusalCacheOption = false | { readonly maxKeys: number };

/** One remembered refusal. */
interface Entry {
  /** The limits it was decided on (the resolved array, compared by identity). */
  readonly limits: readonly ResolvedLimit[];
  readonly cost: number;
  /** The limiter's clock when the store was asked. */
  readonly sentMs: number;
  /** Until when (exclusive, local clock) it may answer. */
  readonly untilMs: number;
  readonly decision: Decision;
  /**
   * Per limit entry of `decision`: whether it has its own `blockedMs` key, when `decision` has
   * core's shape (see {@link coreShape}), so {@link retimedCoreShape} can re-time it; `undefined`
   * for any other shape, which {@link retimed} re-times.
   */
  readonly shape: readonly boolean[] | undefined;
}

/**
 * Validates `createLimiter`'s `refusalCache` option for `store`: `undefined`
 * means on (with {@link DEFAULT_REFUSAL_CACHE_KEYS}) when `store.shared`,
 * off otherwise. `'on'` is the default of ratekit's own API; the drop-in
 * (compat) modes pass `false` unless their user asks for it.
 *
 * @throws {RateKitOptionError} for anything but `true`, `false` or `{ maxKeys }` with an integer ≥ 1.
 */
export function resolveRefusalCacheOption(option: unknown, store: RateLimitStore | undefined): RefusalCacheOption {
  if (option === false) return false;
  if (option === undefined || option === true) return store?.shared === true ? { maxKeys: DEFAULT_REFUSAL_CACHE_KEYS } : false;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new RateKitOptionError('refusalCache', 'true, false or { maxKeys }', option);
  }
  assertKnownKeys('refusalCache', option as Record<string, unknown>, ['maxKeys']);
  const maxKeys = (option as { maxKeys?: unknown }).maxKeys ?? DEFAULT_REFUSAL_CACHE_KEYS;
  assertInteger('refusalCache.maxKeys', maxKeys, 1);
  return store?.shared === true ? { maxKeys } : false;
}

/**
 * The local deadline (exclusive) until which `decision`, the store's answer
 * to a request sent at `sentMs` on `limits`, would be the store's answer to
 * the same request again; `undefined` when it is not to be cached (an
 * admission, or a refusal that is not certain to repeat: see the module
 * comment). Pure.
 */
export function refusalDeadlineMs(decision: Decision, limits: readonly ResolvedLimit[], sentMs: number): number | undefined {
  if (decision.allowed) return undefined;
  const entries = decision.limits;
  const top = decision.retryAfterMs;
  if (!(top < Infinity) || entries.length !== limits.length) return undefined;
  let leftMs = top;
  let refusing = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const limit = limits[i]!;
    if (!entry.allowed) {
      if (limit.refusedPenaltyCapMs !== undefined) return undefined;
      if (top - entry.retryAfterMs < 1) refusing++;
      if (entry.retryAfterMs < leftMs) leftMs = entry.retryAfterMs;
      if (limit.blockDurationMs > 0) {
        // Blocked: refuses, unchanged, until the block ends; not blocked: the next consume blocks.
        const blockedMs = entry.blockedMs ?? 0;
        if (!(blockedMs > 0)) return undefined;
        if (blockedMs < leftMs) leftMs = blockedMs;
        continue;
      }
    }
    const stable = remainingStableMs(entry, limit);
    if (stable < leftMs) leftMs = stable;
  }
  // Two refusing limits with (nearly) the same wait: rounding could make either one bind.
  if (refusing !== 1) return undefined;
  leftMs -= REFUSAL_CACHE_MARGIN_MS;
  return leftMs > 0 ? sentMs + leftMs : undefined;
}

/**
 * Ms during which the limit's whole `remaining` cannot change without a
 * write (time only credits tokens): `Infinity` when it is full.
 */
export function remainingStableMs(entry: LimitDecision, limit: ResolvedLimit): number {
  const tokens = entry.tokensAfter;
  if (tokens >= entry.limit - EPSILON) return Infinity;
  let perMs: number;
  switch (limit.algorithm) {
    case 'fixed-window':
    case 'sliding-log':
      // Tokens come back all at once, at the window's end or when the oldest entry leaves.
      return entry.nextRefillMs > 0 ? entry.nextRefillMs : Infinity;
    case 'token-bucket':
      if (limit.refill === 'interval') return entry.nextRefillMs > 0 ? entry.nextRefillMs : Infinity;
      perMs = 1 / limit.emissionIntervalMs;
      break;
    case 'sliding-window':
      // The previous window's count (at most the limit) decays over one window.
      perMs = limit.limit / limit.windowMs;
      break;
    default:
      // GCRA and delay: one token per emission interval.
      perMs = 1 / limit.emissionIntervalMs;
  }
  return (Math.floor(tokens + EPSILON) + 1 - tokens) / perMs;
}

/**
 * `decision`, answered `elapsedMs` after the store made it: its durations
 * (`blockedMs` included) shortened by `elapsedMs` (never below 0; `Infinity` stays), its `nowMs`
 * moved on, and `source: 'cache'`. Token counts are the store's (they
 * cannot have changed in whole tokens, see {@link refusalDeadlineMs}).
 */
export function retimed(decision: Decision, elapsedMs: number): Decision {
  const limits = decision.limits.map((entry) => ({
    ...entry,
    resetMs: earlier(entry.resetMs, elapsedMs),
    retryAfterMs: earlier(entry.retryAfterMs, elapsedMs),
    nextRefillMs: earlier(entry.nextRefillMs, elapsedMs),
    ...(entry.blockedMs === undefined ? {} : { blockedMs: earlier(entry.blockedMs, elapsedMs) }),
  }));
  return {
    ...decision,
    resetMs: earlier(decision.resetMs, elapsedMs),
    retryAfterMs: earlier(decision.retryAfterMs, elapsedMs),
    nowMs: decision.nowMs + elapsedMs,
    limits,
    source: 'cache',
  };
}

function earlier(ms: number, elapsedMs: number): number {
  return ms === Infinity ? ms : Math.max(0, ms - elapsedMs);
}

/** A {@link Decision}'s own keys, in the order core's stores build it (`decision.ts`). */
const DECISION_KEYS = 'allowed,limit,remaining,resetMs,retryAfterMs,delayMs,cost,nowMs,policy,limits';
/** A {@link LimitDecision}'s own keys, in the order core builds it; `blockedMs` last when present. */
const LIMIT_KEYS = 'name,algorithm,allowed,limit,quota,windowMs,remaining,tokensBefore,tokensRefilled,tokensPaid,tokensAfter,resetMs,retryAfterMs,nextRefillMs';
const BLOCKED_LIMIT_KEYS = `${LIMIT_KEYS},blockedMs`;

/**
 * When `decision` has core's shape (plain objects and a plain array, exactly the keys
 * core's stores give, in their order, no symbols), per limit entry whether it has its own
 * `blockedMs` key; otherwise `undefined`. For such a decision {@link retimedCoreShape}
 * builds what {@link retimed} builds, key for key, without the object spreads (which cost
 * most of a cached refusal: `bench/lib/refusal-ab.mjs`). Checked once per kept refusal.
 */
export function coreShape(decision: Decision): readonly boolean[] | undefined {
  if (!isPlain(decision) || Object.keys(decision).join(',') !== DECISION_KEYS) return undefined;
  const limits: unknown = decision.limits;
  if (!Array.isArray(limits) || Object.getPrototypeOf(limits) !== Array.prototype) return undefined;
  const shape: boolean[] = [];
  for (let i = 0; i < limits.length; i++) {
    if (!Object.hasOwn(limits, i)) return undefined;
    const entry: unknown = limits[i];
    if (typeof entry !== 'object' || entry === null || !isPlain(entry)) return undefined;
    const keys = Object.keys(entry).join(',');
    if (keys === LIMIT_KEYS) shape.push(false);
    else if (keys === BLOCKED_LIMIT_KEYS) shape.push(true);
    else return undefined;
  }
  return shape;
}

function isPlain(value: object): boolean {
  return Object.getPrototypeOf(value) === Object.prototype && Object.getOwnPropertySymbols(value).length === 0;
}

/**
 * {@link retimed} for a decision of core's shape (`shape` from {@link coreShape}): the same
 * keys in the same order and the same values, written out. Pure.
 */
export function retimedCoreShape(decision: Decision, shape: readonly boolean[], elapsedMs: number): Decision {
  const from = decision.limits;
  let limits: LimitDecision[];
  if (from.length === 1) limits = [retimedEntry(from[0]!, shape[0]!, elapsedMs)];
  else {
    limits = [];
    for (let i = 0; i < from.length; i++) limits.push(retimedEntry(from[i]!, shape[i]!, elapsedMs));
  }
  return {
    allowed: decision.allowed,
    limit: decision.limit,
    remaining: decision.remaining,
    resetMs: earlier(decision.resetMs, elapsedMs),
    retryAfterMs: earlier(decision.retryAfterMs, elapsedMs),
    delayMs: decision.delayMs,
    cost: decision.cost,
    nowMs: decision.nowMs + elapsedMs,
    policy: decision.policy,
    limits,
    source: 'cache',
  };
}

function retimedEntry(entry: LimitDecision, hasBlockedMs: boolean, elapsedMs: number): LimitDecision {
  const out = {
    name: entry.name,
    algorithm: entry.algorithm,
    allowed: entry.allowed,
    limit: entry.limit,
    quota: entry.quota,
    windowMs: entry.windowMs,
    remaining: entry.remaining,
    tokensBefore: entry.tokensBefore,
    tokensRefilled: entry.tokensRefilled,
    tokensPaid: entry.tokensPaid,
    tokensAfter: entry.tokensAfter,
    resetMs: earlier(entry.resetMs, elapsedMs),
    retryAfterMs: earlier(entry.retryAfterMs, elapsedMs),
    nextRefillMs: earlier(entry.nextRefillMs, elapsedMs),
  } as { -readonly [K in keyof LimitDecision]: LimitDecision[K] };
  if (hasBlockedMs) {
    // As the spread in `retimed`: the key stays last, an `undefined` value stays `undefined`.
    const blockedMs = entry.blockedMs;
    out.blockedMs = blockedMs === undefined ? undefined : earlier(blockedMs, elapsedMs);
  }
  return out;
}

/**
 * A limiter's cache of refusals (see the module comment). One entry per
 * key: the limiter's namespace is fixed, so the user-controlled key is the
 * whole index key and cannot reach another namespace's entries; the
 * limits set is part of the entry, compared by identity.
 */
export class RefusalCache {
  readonly maxKeys: number;
  readonly #index: LruIndex<Entry>;
  /**
   * Moves on at every refund and reset (when sent and when answered): a
   * refusal sent before one of them and answered after it may predate the
   * state it changed, so it is not remembered.
   */
  generation = 0;

  constructor(maxKeys: number) {
    this.maxKeys = maxKeys;
    this.#index = new LruIndex<Entry>(maxKeys, () => undefined);
  }

  /** Keys held (expired entries included until they are read). */
  get size(): number {
    return this.#index.size;
  }

  /**
   * The remembered refusal of `key` for exactly these `limits` and `cost`,
   * re-timed to `nowMs`; undefined when there is none or it has expired
   * (an expired entry is dropped, as is one when the clock went backwards).
   */
  lookup(key: string, limits: readonly ResolvedLimit[], cost: number, nowMs: number): Decision | undefined {
    const entry = this.#index.get(key);
    if (entry === undefined) return undefined;
    if (nowMs >= entry.untilMs || nowMs < entry.sentMs) {
      this.#index.delete(key);
      return undefined;
    }
    if (entry.limits !== limits || entry.cost !== cost) return undefined;
    const elapsedMs = nowMs - entry.sentMs;
    return entry.shape === undefined ? retimed(entry.decision, elapsedMs) : retimedCoreShape(entry.decision, entry.shape, elapsedMs);
  }

  /**
   * Takes in the store's answer to a `consume` or `peek` of `key` sent at
   * `sentMs` (when {@link generation} was `generation`): remembers a refusal
   * that will repeat, and forgets the key otherwise (an admission changed
   * its state; a refusal that will not repeat replaces nothing).
   */
  settle(key: string, limits: readonly ResolvedLimit[], cost: number, sentMs: number, decision: Decision, generation: number): void {
    const untilMs = generation === this.generation ? refusalDeadlineMs(decision, limits, sentMs) : undefined;
    if (untilMs === undefined) this.#index.delete(key);
    else this.#index.set(key, { limits, cost, sentMs, untilMs, decision, shape: coreShape(decision) });
  }

  /** Forgets `key` (a refund or reset of it on this limiter) and moves {@link generation} on. */
  forget(key: string): void {
    this.generation++;
    this.#index.delete(key);
  }
}
