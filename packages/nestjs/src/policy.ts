import type { ExecutionContext } from '@nestjs/common';
import {
  ALGORITHMS,
  type AlgorithmName,
  assertNonNegative,
  assertOneOf,
  assertPositive,
  createLimiter,
  type Decision,
  type LimitDecision,
  type LimiterOptions,
  type LimitOptions,
  RateKitOptionError,
  resolveLimit,
  STANDARD_HEADER_DRAFTS,
  type StandardHeaders,
} from '@ratekit/core';
import type { ThrottlerLimitDetail } from './guard-types.js';
import type {
  RateKitModuleOptions,
  RateKitThrottlerOptions,
  Resolvable,
  ThrottlerGenerateKeyFunction,
  ThrottlerGetTrackerFunction,
  ThrottlerHttpObject,
  ThrottlerModuleOptions,
  ThrottlerOptions,
} from './options.js';
import { mergeRateKitOptions } from './route-options.js';

/** One throttler of a route, its values resolved for this request (ratekit mode). */
export interface PolicyEntry {
  throttler: ThrottlerOptions;
  limit: number;
  /** The window, in ms. */
  ttl: number;
  /** ratekit's block, in ms (the count is kept through it). */
  blockDurationMs: number | undefined;
  algorithm: AlgorithmName | undefined;
  burst: number | undefined;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}

/** What one throttler said about the request. */
export interface PolicyResult {
  entry: PolicyEntry;
  decision: LimitDecision;
  /** True for a throttler that refused the request (or stands for a store-failure refusal, `onStoreError: 'deny'`). */
  refusing: boolean;
  /** Ms until this throttler would admit the request again. */
  retryAfterMs: number;
}

/** The decision of a route's throttlers. */
export interface PolicyOutcome {
  /** Per throttler, in the order given. */
  results: PolicyResult[];
  /** One decision per store call (per distinct tracker and key function) and its key, for the IETF headers. */
  decisions: Array<{ decision: Decision; key: string }>;
  /** The detail of the first throttler that refused, when the request is refused. */
  refused: ThrottlerLimitDetail | undefined;
}

/** Decides a route's throttlers all-or-nothing. */
export interface PolicyDecider {
  readonly standardHeaders: StandardHeaders;
  decide(context: ExecutionContext, req: ThrottlerHttpObject, entries: PolicyEntry[]): Promise<PolicyOutcome>;
}

/** Module options that turn the ratekit mode on. */
const MODULE_SWITCHES = ['store', 'algorithm', 'cost', 'standardHeaders', 'onStoreError', 'storeTimeoutMs'] as const;
/** Throttler options that turn it on. */
const THROTTLER_SWITCHES = ['algorithm', 'burst', 'blockDurationMs'] as const;
/** Distinct policies whose limit objects are kept (each is validated once); more are rebuilt. */
const MAX_CACHED_POLICIES = 256;

/**
 * True when the options ask for the ratekit mode (see `RateKitModuleOptions`).
 * @throws {RateKitOptionError} when `throttlers` is not an array, or `policy` is not 'each' or 'all-or-nothing'
 */
export function isRateKitMode(options: ThrottlerModuleOptions): boolean {
  // Public input: JavaScript callers can leave `throttlers` out (upstream then fails with a TypeError).
  const throttlers: unknown = Array.isArray(options) ? options : options.throttlers;
  if (!Array.isArray(throttlers)) throw new RateKitOptionError('throttlers', 'an array of throttlers', throttlers);
  if (!Array.isArray(options)) {
    if (options.policy !== undefined) {
      assertOneOf('policy', options.policy, ['each', 'all-or-nothing'] as const);
      return options.policy === 'all-or-nothing';
    }
    if (MODULE_SWITCHES.some((key) => options[key] !== undefined)) return true;
  }
  return (throttlers as ThrottlerOptions[]).some((throttler) => THROTTLER_SWITCHES.some((key) => throttler[key] !== undefined));
}

/**
 * The ratekit mode's decider: one limiter on the module's `store`, whose policy per request is the
 * route's throttlers. Validates the options now.
 * @throws {RateKitOptionError} on a bad option, naming it
 */
export function createPolicyDecider(options: Exclude<ThrottlerModuleOptions, unknown[]> & RateKitModuleOptions): PolicyDecider {
  if (options.algorithm !== undefined) assertOneOf('algorithm', options.algorithm, ALGORITHMS);
  const standardHeaders = options.standardHeaders ?? false;
  if (standardHeaders !== false) assertOneOf('standardHeaders', standardHeaders, STANDARD_HEADER_DRAFTS);
  const cost = options.cost ?? 1;
  if (typeof cost !== 'function') assertNonNegative('cost', cost);
  // Every throttler is checked now, so a bad one fails at start-up (its routes' `@Throttle`: ThrottlerRouteCheck).
  checkThrottlers(options);
  const limiterOptions: LimiterOptions<readonly LimitOptions[]> = { limits: (limits) => limits, prefix: 'throttler-policy:' };
  if (options.store !== undefined) limiterOptions.store = options.store;
  if (options.onStoreError !== undefined) limiterOptions.onStoreError = options.onStoreError;
  if (options.storeTimeoutMs !== undefined) limiterOptions.storeTimeoutMs = options.storeTimeoutMs;
  const limiter = createLimiter(limiterOptions);
  const policies = new Map<string, readonly LimitOptions[]>();

  function policyOf(group: PolicyEntry[]): readonly LimitOptions[] {
    let id = '';
    for (const e of group) id += `${e.throttler.name}\u0000${e.algorithm ?? options.algorithm}\u0000${e.limit}\u0000${e.ttl}\u0000${e.burst}\u0000${e.blockDurationMs}\u0000`;
    let policy = policies.get(id);
    if (policy === undefined) {
      if (policies.size >= MAX_CACHED_POLICIES) policies.clear();
      policy = group.map((e) => limitOptions(e.throttler.name!, e.algorithm ?? options.algorithm, e.limit, e.ttl, e.burst, e.blockDurationMs));
      policies.set(id, policy);
    }
    return policy;
  }

  return {
    standardHeaders,
    async decide(context, req, entries) {
      const costOf = typeof cost === 'function' ? cost(context) : cost;
      if (typeof costOf !== 'number' || !Number.isFinite(costOf) || costOf < 0) throw new RateKitOptionError('cost', 'a finite number >= 0', costOf);
      // Throttlers sharing their tracker and key functions are one policy, one store call.
      const groups = new Map<ThrottlerGetTrackerFunction, Map<ThrottlerGenerateKeyFunction, PolicyEntry[]>>();
      for (const entry of entries) {
        let byKey = groups.get(entry.getTracker);
        if (byKey === undefined) groups.set(entry.getTracker, (byKey = new Map<ThrottlerGenerateKeyFunction, PolicyEntry[]>()));
        const group = byKey.get(entry.generateKey);
        if (group === undefined) byKey.set(entry.generateKey, [entry]);
        else group.push(entry);
      }
      /** `decision`: what the call decided; `shown`: the state it leaves (after a refund), for the headers. */
      const calls: Array<{ group: PolicyEntry[]; key: string; tracker: string; policy: readonly LimitOptions[]; decision: Decision; shown: Decision }> = [];
      for (const byKey of groups.values()) {
        for (const group of byKey.values()) {
          const tracker = await group[0]!.getTracker(req, context);
          const key = group[0]!.generateKey(context, tracker, group.map((e) => e.throttler.name).join('+'));
          const policy = policyOf(group);
          const decision = await limiter.consume(key, { context: policy, cost: costOf });
          calls.push({ group, key, tracker, policy, decision, shown: decision });
        }
      }
      const refusedCall = calls.find((call) => !call.decision.allowed);
      if (refusedCall !== undefined) {
        // All-or-nothing across calls too: give back what the other calls charged.
        for (const call of calls) if (call.decision.allowed) call.shown = await limiter.refund(call.key, { context: call.policy, cost: costOf });
      }
      const results: PolicyResult[] = [];
      let refused: ThrottlerLimitDetail | undefined;
      for (const entry of entries) {
        const call = calls.find((c) => c.group.includes(entry))!;
        const index = call.group.indexOf(entry);
        const decision = call.shown.limits[index]!;
        // A refusal no throttler made itself (the store failed, `onStoreError: 'deny'`) is the first throttler's.
        const refusing = !call.decision.allowed && (!decision.allowed || (index === 0 && call.decision.limits.every((l) => l.allowed)));
        const retryAfterMs = decision.allowed ? call.decision.retryAfterMs : decision.retryAfterMs;
        results.push({ entry, decision, refusing, retryAfterMs });
        if (refused === undefined && refusing) {
          refused = {
            limit: entry.limit,
            ttl: entry.ttl,
            key: call.key,
            tracker: call.tracker,
            totalHits: Math.max(0, entry.limit - decision.remaining) + costOf,
            timeToExpire: wholeSeconds(decision.resetMs),
            isBlocked: true,
            timeToBlockExpire: wholeSeconds(retryAfterMs),
          };
        }
      }
      return { results, decisions: calls.map(({ shown, key }) => ({ decision: shown, key })), refused };
    },
  };
}

/**
 * Checks the module's throttlers (see {@link checkThrottler}).
 * @throws {RateKitOptionError} naming `throttlers[i].<option>`
 */
export function checkThrottlers(options: Exclude<ThrottlerModuleOptions, unknown[]> & RateKitModuleOptions): void {
  options.throttlers.forEach((throttler, i) => {
    const ratekit = mergeRateKitOptions([throttler, { algorithm: options.algorithm }]);
    checkThrottler(`throttlers[${i}]`, throttler.name ?? 'default', ratekit, throttler.limit, throttler.ttl, throttler.blockDuration);
  });
}

/**
 * Checks one throttler of one route as the ratekit limit it makes, its options merged (see
 * `mergeRateKitOptions`): `limit`, `ttl` and `blockDuration` given as functions are resolved per
 * request, so a valid value stands in for them here and the other options are still checked.
 * @throws {RateKitOptionError} naming `${path}.<option>`
 */
export function checkThrottler(path: string, name: string, ratekit: RateKitThrottlerOptions, limit: Resolvable<number>, ttl: Resolvable<number>, blockDuration: Resolvable<number> | undefined): void {
  // Named as the user wrote them (`ttl`, not the limit's `windowMs`).
  if (typeof limit !== 'function') assertPositive(`${path}.limit`, limit);
  if (typeof ttl !== 'function') assertPositive(`${path}.ttl`, ttl, ' of milliseconds');
  const blockDurationMs = ratekit.blockDurationMs ?? (typeof blockDuration === 'number' ? blockDuration : undefined);
  resolveLimit(limitOptions(name, ratekit.algorithm, typeof limit === 'function' ? 1 : limit, typeof ttl === 'function' ? 1_000 : ttl, ratekit.burst, blockDurationMs), path);
}

function limitOptions(name: string, algorithm: AlgorithmName | undefined, limit: number, ttl: number, burst: number | undefined, blockDurationMs: number | undefined): LimitOptions {
  const options: LimitOptions = { name, algorithm: algorithm ?? 'fixed-window', limit, windowMs: ttl };
  if (burst !== undefined) options.burst = burst;
  if (blockDurationMs !== undefined && blockDurationMs > 0) options.blockDurationMs = blockDurationMs;
  return options;
}

/** Whole seconds, rounded up; a wait that never ends reads 0. */
export function wholeSeconds(ms: number): number {
  return Number.isFinite(ms) ? Math.ceil(ms / 1_000) : 0;
}
