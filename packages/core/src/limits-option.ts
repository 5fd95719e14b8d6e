/**
 * The `limits` option of `createLimiter`, resolved once: a limit, a policy of several, or a function
 * of the call's context choosing them. Every limit is validated when the limiter is built (or, for a
 * function, the first time it returns an object: the answer is cached per object), and each must be
 * able to admit the limiter's cost, since a limit whose capacity is below it would refuse every
 * request forever.
 *
 * @module
 */
import { RateKitOptionError } from './errors.js';
import { capacityOf, type LimitOptions, type ResolvedLimit, resolveLimit } from './limit.js';
import type { LimitsOption } from './limiter.js';
import type { RateLimitStore } from './stores/types.js';

/** Normalises the `limits` option into a function of the context returning validated limits. */
export function resolveLimitsOption<TContext>(option: LimitsOption<TContext>, store: RateLimitStore | undefined, cost: number): (context: TContext) => readonly ResolvedLimit[] {
  if (typeof option === 'function') {
    // Cache per returned object, so a function returning constants validates them once.
    const cache = new WeakMap<object, readonly ResolvedLimit[]>();
    return (context) => {
      const chosen = option(context);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: a user's limits(context) can return any value
      const cached = typeof chosen === 'object' && chosen !== null ? cache.get(chosen) : undefined;
      if (cached !== undefined) return cached;
      const resolved = resolveList(chosen, 'limits(context)', cost);
      store?.assertSupports?.(resolved, 'limits(context)');
      cache.set(chosen, resolved);
      return resolved;
    };
  }
  const resolved = resolveList(option, 'limits', cost);
  store?.assertSupports?.(resolved, 'limits');
  return () => resolved;
}

/**
 * Validates a policy's limits, each able to admit the limiter's `cost` (a
 * limit whose capacity is below it would refuse every request forever).
 */
function resolveList(option: LimitOptions | readonly LimitOptions[], path: string, cost: number): readonly ResolvedLimit[] {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (!Array.isArray(option) && (typeof option !== 'object' || option === null)) {
    throw new RateKitOptionError(path, 'a limit, an array of limits or a function', option);
  }
  const list: readonly LimitOptions[] = Array.isArray(option) ? option : [option as LimitOptions];
  if (list.length === 0) throw new RateKitOptionError(path, 'at least one limit', option);
  const pathOf = (i: number) => (Array.isArray(option) ? `${path}[${i}]` : path);
  const resolved = list.map((limit, i) => resolveLimit(limit, pathOf(i)));
  const ids = new Set(resolved.map((l) => l.id));
  if (ids.size !== resolved.length) {
    throw new RateKitOptionError(`${path}[].name`, 'distinct limits (give each limit of a policy its own name)', resolved.map((l) => l.name).join(', '));
  }
  const named = distinctNames(resolved, list, path);
  resolved.forEach((limit, i) => {
    if (capacityOf(limit) >= cost) return;
    const bucket = limit.algorithm === 'token-bucket' || limit.algorithm === 'gcra' || limit.algorithm === 'delay';
    const field = bucket ? 'burst' : 'limit';
    throw new RateKitOptionError(`${pathOf(i)}.${field}`, `at least the cost of a request (${cost}), or no request could ever be admitted`, bucket ? limit.burst : limit.limit);
  });
  // Not frozen: V8 (11.x, Node 20) compiles an indexed load from a frozen array
  // to a generic keyed-load call, about 130 instructions on every decision
  // (the store reads `limits[0]`). The type is readonly; each limit is frozen.
  return named;
}

/**
 * The limits with names that tell them apart: the RateLimit and RateLimit-Policy fields name each limit, and
 * the binding policy is found by its name, so two limits of one policy must not share one. Limits of one
 * quota and window that differ in algorithm, burst or refill share the default name `<limit>-in-<window>`: a
 * later one gets `-2`, `-3`… (its state's identity does not change: an unnamed limit's id is its parameters).
 *
 * @throws {RateKitOptionError} (`<path>[].name`) for two limits given the same name
 */
function distinctNames(resolved: ResolvedLimit[], list: readonly LimitOptions[], path: string): ResolvedLimit[] {
  const given = list.map((limit) => limit.name);
  const names = new Set<string>();
  for (const name of given) {
    if (name === undefined) continue;
    if (names.has(name)) throw new RateKitOptionError(`${path}[].name`, 'distinct names (the RateLimit headers name each limit of a policy)', resolved.map((l) => l.name).join(', '));
    names.add(name);
  }
  return resolved.map((limit, i) => {
    if (given[i] !== undefined) return limit;
    let name = limit.name;
    for (let n = 2; names.has(name); n++) name = `${limit.name}-${n}`;
    names.add(name);
    return name === limit.name ? limit : Object.freeze({ ...limit, name });
  });
}
