/**
 * @ratekit/cloudflare: a ratekit store on Cloudflare Durable Objects. `RateLimitObject` (export it
 * from your Worker and bind it) decides every algorithm and multi-limit policy atomically, in its
 * durable storage, on its clock; `durableObjectStore` sends each decision to the object of its
 * key (or of its shard).
 *
 * Workers KV is not offered: it is eventually consistent and takes one write per second per key,
 * so it cannot count exactly.
 *
 * @module
 */
export { durableObjectStore } from './store.js';
export type { DurableObjectNamespaceLike, DurableObjectStore, DurableObjectStoreOptions, DurableObjectStubLike, ResponseLike } from './store.js';
export { EXPIRY_SLACK_MS, RateLimitObject } from './object.js';
export type { DurableObjectStateLike, DurableObjectStorageLike } from './object.js';
