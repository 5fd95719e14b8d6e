/**
 * What the store and its Durable Object exchange, and how an object names its storage.
 *
 * The rule: the Worker sends the whole request (key, namespace, limits, cost, mode, and its clock
 * when the store is on the caller's clock); the object answers with the clock it decided on and
 * the states it read, and the Worker computes the reported decision from them with core's
 * `evaluatePolicy`, the same code the object used to decide what to write (as the Redis store
 * does with its script's reply). The object's own verdict travels too: if the two disagree (an
 * object deployed from another version of this package), the call fails instead of reporting a
 * decision that was not enforced. JSON carries every finite double exactly; the non-finite ones
 * (never in a state, possibly in a limit's parameters) travel as `{"$n": "Infinity"}`.
 *
 * @module
 */
import type { EvaluateMode, LimitState, ResolvedLimit } from '@ratekit/core';

/** The Worker's request to the object: one decision, or a reset. */
export type ObjectRequest =
  | {
      readonly op: 'evaluate';
      readonly key: string;
      readonly namespace: string;
      readonly limits: readonly ResolvedLimit[];
      readonly cost: number;
      readonly mode: EvaluateMode;
      /** The caller's clock (store `clock: 'caller'`); absent: the object's clock decides. */
      readonly nowMs?: number;
    }
  | { readonly op: 'reset'; readonly key: string; readonly namespace: string };

/** The object's answer to `evaluate`: the clock it used, the states it read (null: none), and whether it admitted. */
export interface EvaluateReply {
  readonly nowMs: number;
  readonly states: ReadonlyArray<LimitState | null>;
  readonly allowed: boolean;
}

/** The URL of the object's requests (a Durable Object's `fetch` needs one; only its path is read). */
export const OBJECT_URL = 'https://ratekit.invalid/';

/** JSON of `value`, with non-finite numbers kept. */
export function encode(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { $n: String(v) } : v));
}

/** The value of {@link encode}'s JSON. */
export function decode<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { $n?: unknown }).$n === 'string' && Object.keys(v).length === 1) return Number((v as { $n: string }).$n);
    return v;
  }) as T;
}

/**
 * The storage key of one limit's state of (`namespace`, `key`) in an object: both length-prefixed,
 * so no key can spell another's, whatever characters it holds; a (namespace, key)'s states share
 * the prefix {@link statePrefix} (what `reset` lists).
 */
export function stateKey(namespace: string, key: string, limitId: string): string {
  return `${statePrefix(namespace, key)}${limitId}`;
}

/** The prefix of every state of (`namespace`, `key`) in an object. */
export function statePrefix(namespace: string, key: string): string {
  return `s:${namespace.length}:${namespace}:${key.length}:${key}:`;
}

/**
 * The name of the object holding (`namespace`, `key`): one object per key, or with `shards`, one
 * of `shards` objects per namespace, chosen by a hash of the key (FNV-1a over UTF-16 code units).
 */
export function objectName(namespace: string, key: string, shards: number | undefined): string {
  if (shards === undefined) return `${namespace.length}:${namespace}:${key}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${namespace.length}:${namespace}#${hash % shards}/${shards}`;
}
