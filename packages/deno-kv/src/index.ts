/**
 * @ratekit/deno-kv: a ratekit store on Deno KV. Every algorithm and multi-limit policy, decided
 * with core's code and written by atomic check-and-set, retried on conflict.
 *
 * @module
 */
export { denoKvStore, MAX_SLIDING_LOG_LIMIT } from './store.js';
export type { DenoKvLike, DenoKvStore, DenoKvStoreOptions, KvAtomicLike, KvKey, KvKeyPart } from './store.js';
