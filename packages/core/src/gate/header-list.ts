/**
 * The gate's header list: a decision and its key to the RateLimit fields, built once per limiter.
 *
 * The rule: the draft-8+ fields carry the request's key, hashed, as `pk` (the partition key), so the
 * key is an input of every call; the options are copied once into a private object whose
 * `partitionKey` is set just before each synchronous build. Nothing the caller holds is mutated,
 * and no object is allocated per request. It is safe because the build is synchronous: no other
 * request can set the key between the assignment and the read. Without standard fields the list
 * does not depend on the key at all, and core's `headerListOf` reuses the last list while its
 * figures are unchanged (a flood of refusals builds it once per second).
 *
 * @module
 */
import type { Decision } from '../decision.js';
import type { HeaderList, HeaderOptions } from '../headers/options.js';
import { headerListOf } from '../headers/memo.js';

/** The fields of a decision for one key; `undefined` when every header is off. */
export type KeyedHeaderList = ((decision: Decision, key: string) => Readonly<HeaderList>) | undefined;

/**
 * Builds the header function of a limiter's options.
 *
 * @param options - resolved by `resolveHeaderOptions`; read once here, never changed
 * @returns `(decision, key) => fields`, or `undefined` when no header is on
 * @example
 * ```ts
 * const headersOf = keyedHeaderList(resolveHeaderOptions({ standardHeaders: 'draft-8' }));
 * headersOf?.(decision, '203.0.113.7'); // [['RateLimit-Policy', '"60-in-1min"; q=60; w=60; pk=:…:'], …]
 * ```
 */
export function keyedHeaderList(options: HeaderOptions): KeyedHeaderList {
  if (options.standardHeaders === false && !options.legacyHeaders && options.retryAfter !== true) return undefined;
  const own: HeaderOptions = { ...options };
  const list = headerListOf(own);
  if (options.standardHeaders === false) return (decision) => list(decision);
  return (decision, key) => {
    own.partitionKey = key;
    return list(decision);
  };
}
