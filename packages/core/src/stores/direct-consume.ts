/**
 * The memory store's direct `consume` path, handed to the limiter by store object: a limiter
 * built on a store made by `memoryStore` calls it instead of `evaluate`, with the request's
 * fields as arguments (no request object).
 *
 * @module
 */
import type { Decision } from '../decision.js';
import type { ResolvedLimit } from '../limit.js';
import type { RateLimitStore } from './types.js';

/** `evaluate` in mode `'consume'`, the request's fields as arguments. */
export type ConsumeFunction = (key: string, namespace: string, limits: readonly ResolvedLimit[], cost: number, nowMs: number) => Decision;

/**
 * Each memory store's `consume` (see `memoryStore`), by store object: a limiter built on the
 * store itself takes it, and one built on a copy or a wrapper (`{ ...memoryStore(), evaluate }`)
 * does not, so a wrapped `evaluate` is never bypassed.
 */
const consumers = new WeakMap<RateLimitStore, ConsumeFunction>();

/** Registers `consume` as `store`'s direct path. For `memoryStore`, once per store it makes. */
export function setMemoryConsume(store: RateLimitStore, consume: ConsumeFunction): void {
  consumers.set(store, consume);
}

/** The fast `consume` of a store made by `memoryStore`; undefined for any other store. For the limiter. */
export function memoryConsumeOf(store: RateLimitStore): ConsumeFunction | undefined {
  return consumers.get(store);
}
