import { RateKitOptionError } from './errors.js';
import { defaultPolicyName } from './headers/policy-name.js';
import { assertPolicyName } from './headers/sf-string.js';
import { assertKnownKeys, assertNonNegative, assertObject, assertOneOf, assertPositive } from './validate.js';

/** The algorithms a limit can use. Each lives in `algorithms/<name>.ts`. */
export const ALGORITHMS = ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra', 'delay'] as const;

/** The algorithms that have a capacity (`burst`) distinct from the quota. */
const BUCKET_ALGORITHMS: readonly string[] = ['token-bucket', 'gcra', 'delay'];

/** The options a limit takes (see {@link LimitOptions}). */
const LIMIT_OPTIONS = ['algorithm', 'limit', 'windowMs', 'burst', 'refill', 'maxDelayMs', 'refusedPenaltyCapMs', 'blockDurationMs', 'name'] as const;

/**
 * The longest `blockDurationMs`: 2³¹ − 1 ms (about 24.8 days), what Node's
 * timers hold, so `limiter.wait()` and adapters can sleep for a block's
 * `retryAfterMs` without the timer firing after 1 ms instead.
 */
export const MAX_BLOCK_DURATION_MS = 2 ** 31 - 1;

/** One of {@link ALGORITHMS}. */
export type AlgorithmName = (typeof ALGORITHMS)[number];

/**
 * One limit: a quota of `limit` per `windowMs`, enforced by one algorithm.
 * A policy is one or more limits checked all-or-nothing.
 *
 * Units: every duration is in milliseconds. Costs and quotas are in the same
 * unit ("tokens" for the bucket algorithms, "requests" for the windows).
 *
 * @example
 * ```ts
 * const perSecond: LimitOptions = { algorithm: 'gcra', limit: 10, windowMs: 1_000 };
 * const perMinute: LimitOptions = { limit: 100, windowMs: 60_000, name: 'minute' };
 * ```
 */
export interface LimitOptions {
  /**
   * The algorithm.
   * - `fixed-window`: at most `limit` per window; the window starts at a key's first hit.
   * - `sliding-window`: sliding-window counter (Cloudflare, 2017); approximate, two counters.
   * - `sliding-log`: exact; keeps one (time, cost) entry per admission, merged per millisecond.
   * - `token-bucket`: capacity `burst`, refilled by `limit` tokens per `windowMs`.
   * - `gcra`: generic cell rate algorithm; same admissions as a continuous token bucket, one timestamp (the TAT) per key.
   * - `delay`: leaky bucket as a queue; over-rate requests are admitted after a delay of at most `maxDelayMs`.
   * @default 'fixed-window'
   */
  algorithm?: AlgorithmName;
  /** The quota: how many units are admitted per `windowMs` (for buckets, the refill per `windowMs`). */
  limit: number;
  /** The window or refill period, in milliseconds. */
  windowMs: number;
  /**
   * Bucket capacity for `token-bucket`, `gcra` and `delay`: how many units can pass at once.
   * @default `limit` (for `delay`: 1, so requests are spaced evenly)
   */
  burst?: number;
  /**
   * Token bucket refill mode. `continuous` refills fractionally as time passes;
   * `interval` adds `limit` tokens only when a whole `windowMs` has elapsed.
   * @default 'continuous'
   */
  refill?: 'continuous' | 'interval';
  /** `delay` only: the longest delay, in ms, a request may be held before it is refused. @default windowMs */
  maxDelayMs?: number;
  /**
   * `delay` only: when set, refused requests still push the wait-until time
   * forward (penalising clients that keep hammering), but never beyond this
   * many ms from now. When unset, a refused request changes nothing.
   */
  refusedPenaltyCapMs?: number;
  /**
   * Block duration, in milliseconds: once this limit refuses a `consume`,
   * the key stays refused by this limit for this long, whatever the
   * algorithm, even if its budget refills meanwhile. Every algorithm and
   * every store honours it (except `@ratekit/synced`, which refuses it when
   * the limiter is built).
   *
   * - The refusal that starts a block is the one charge it makes: it stores
   *   "blocked until `now + blockDurationMs`" with this limit's state. It
   *   charges no other limit of the policy (policies stay all-or-nothing).
   * - While blocked, every `consume` is refused, charges nothing and does
   *   not extend the block; decisions report `remaining: 0` and a
   *   `retryAfterMs` and `resetMs` of at least the time left in the block
   *   (more when the algorithm itself would still refuse then), so
   *   `Retry-After` tells the client when it may come back.
   * - A refusal after the block has ended starts a new one. So does a
   *   request whose cost exceeds the limit's capacity.
   * - `peek` does not block (it writes nothing): it reports a key as it
   *   stands, blocked or not. `refund` gives tokens back but keeps a block;
   *   `limiter.reset(key)` lifts it.
   * - 0 (the default) disables blocking.
   *
   * The same idea as rate-limiter-flexible's `blockDuration` (in seconds
   * there) and @fastify/rate-limit's `ban` (which bans after a number of
   * refusals rather than at the first one).
   *
   * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`, option
   * `limits[i].blockDurationMs`) when the limiter is built with a value that
   * is not a finite number ≥ 0, or above 2³¹ − 1 ms (about 24.8 days, what
   * Node's timers hold).
   * @default 0
   * @example
   * ```ts
   * // 5 failed logins per 15 minutes; the 6th is refused and blocks the key for an hour.
   * const failures: LimitOptions = { limit: 5, windowMs: 15 * 60_000, blockDurationMs: 60 * 60_000 };
   * ```
   */
  blockDurationMs?: number;
  /**
   * The policy name, used in `RateLimit-Policy` headers: printable ASCII
   * (0x20–0x7E; `"` and `\` are escaped when sent). A named limit's
   * state is identified by its algorithm and name, so two limits with the
   * same algorithm and name on one key share their state (for example a free
   * and a paid plan, so usage carries over an upgrade). Unnamed limits are
   * identified by all their parameters. The limits of one policy have
   * distinct names (the headers name each): two given one name throw; an
   * unnamed limit whose default another limit of the policy already has is
   * named `<default>-2`, `-3`….
   * @default `<limit>-in-<window>`, as express-rate-limit names draft-8 policies, e.g. `100-in-15min`
   */
  name?: string;
}

/** A validated limit with its derived constants. Produced by {@link resolveLimit}; never mutated. */
export interface ResolvedLimit {
  readonly algorithm: AlgorithmName;
  readonly limit: number;
  readonly windowMs: number;
  /** Capacity: the most units that can be available at once. */
  readonly burst: number;
  readonly refill: 'continuous' | 'interval';
  readonly maxDelayMs: number;
  readonly refusedPenaltyCapMs: number | undefined;
  /** Ms a refusal blocks the key for (see {@link LimitOptions.blockDurationMs}); 0: no blocking. */
  readonly blockDurationMs: number;
  /** The emission interval, in ms: `windowMs / limit`, the time one unit takes to refill. */
  readonly emissionIntervalMs: number;
  /** The policy name (see {@link LimitOptions.name}). */
  readonly name: string;
  /** The identity of this limit's state under a key: stores keep one state per (key, namespace, id). */
  readonly id: string;
}

/**
 * Validates one limit and derives its constants.
 *
 * @param options - the limit, as given by the user
 * @param path - the option path used in error messages, e.g. `limits[1]`
 * @throws {RateKitOptionError} when an option is missing, unknown or out of range (code `ERR_RATEKIT_INVALID_OPTION`)
 */
export function resolveLimit(options: LimitOptions, path = 'limit'): ResolvedLimit {
  assertObject(path, options);
  assertKnownKeys(path, options, LIMIT_OPTIONS);
  const algorithm = options.algorithm ?? 'fixed-window';
  assertOneOf(`${path}.algorithm`, algorithm, ALGORITHMS);
  assertPositive(`${path}.limit`, options.limit);
  assertPositive(`${path}.windowMs`, options.windowMs, ' of milliseconds');
  const burst = options.burst ?? (algorithm === 'delay' ? 1 : options.limit);
  assertPositive(`${path}.burst`, burst);
  const refill = options.refill ?? 'continuous';
  assertOneOf(`${path}.refill`, refill, ['continuous', 'interval'] as const);
  const maxDelayMs = options.maxDelayMs ?? options.windowMs;
  assertNonNegative(`${path}.maxDelayMs`, maxDelayMs, ' of milliseconds');
  if (options.refusedPenaltyCapMs !== undefined) {
    assertNonNegative(`${path}.refusedPenaltyCapMs`, options.refusedPenaltyCapMs, ' of milliseconds');
  }
  const blockDurationMs = options.blockDurationMs ?? 0;
  assertNonNegative(`${path}.blockDurationMs`, blockDurationMs, ' of milliseconds');
  if (blockDurationMs > MAX_BLOCK_DURATION_MS) {
    throw new RateKitOptionError(`${path}.blockDurationMs`, `at most ${MAX_BLOCK_DURATION_MS} ms (about 24.8 days, what Node's timers hold)`, blockDurationMs);
  }
  if (options.burst !== undefined && !BUCKET_ALGORITHMS.includes(algorithm)) {
    throw new RateKitOptionError(`${path}.burst`, "unset unless `algorithm` is 'token-bucket', 'gcra' or 'delay'", options.burst);
  }
  if (options.refill !== undefined && algorithm !== 'token-bucket') {
    throw new RateKitOptionError(`${path}.refill`, "unset unless `algorithm` is 'token-bucket'", options.refill);
  }
  if (algorithm !== 'delay') {
    if (options.maxDelayMs !== undefined) throw new RateKitOptionError(`${path}.maxDelayMs`, "unset unless `algorithm` is 'delay'", options.maxDelayMs);
    if (options.refusedPenaltyCapMs !== undefined) {
      throw new RateKitOptionError(`${path}.refusedPenaltyCapMs`, "unset unless `algorithm` is 'delay'", options.refusedPenaltyCapMs);
    }
  }
  if (options.name !== undefined) assertPolicyName(`${path}.name`, options.name);
  return Object.freeze({
    algorithm,
    limit: options.limit,
    windowMs: options.windowMs,
    burst,
    refill,
    maxDelayMs,
    refusedPenaltyCapMs: options.refusedPenaltyCapMs,
    blockDurationMs,
    emissionIntervalMs: options.windowMs / options.limit,
    name: options.name ?? defaultPolicyName(options.limit, options.windowMs),
    id:
      options.name !== undefined ? `${algorithm}:${options.name}` : unnamedLimitId(algorithm, options.limit, options.windowMs, burst, refill, maxDelayMs, options.refusedPenaltyCapMs, blockDurationMs),
  });
}

/**
 * The id of an unnamed limit: all its parameters, so limits that differ in
 * any of them keep separate states. A limit without a block keeps the id it
 * had before `blockDurationMs` existed (its stored state stays its own).
 * Remote stores that must know whether an id pins the parameters rebuild it
 * with this function.
 */
export function unnamedLimitId(
  algorithm: AlgorithmName,
  limit: number,
  windowMs: number,
  burst: number,
  refill: string,
  maxDelayMs: number,
  refusedPenaltyCapMs: number | undefined,
  blockDurationMs: number,
): string {
  const id = `${algorithm}:${limit}:${windowMs}:${burst}:${refill}:${maxDelayMs}:${refusedPenaltyCapMs ?? ''}`;
  return blockDurationMs > 0 ? `${id}:block=${blockDurationMs}` : id;
}

/**
 * The most units a limit can ever admit at once: `limit` for the windows,
 * `burst` for the token bucket and GCRA, and for `delay` the burst plus what
 * `maxDelayMs` of queueing adds. A request costing more is refused forever.
 */
export function capacityOf(limit: ResolvedLimit): number {
  if (limit.algorithm === 'delay') return limit.burst + limit.maxDelayMs / limit.emissionIntervalMs;
  return BUCKET_ALGORITHMS.includes(limit.algorithm) ? limit.burst : limit.limit;
}
