/**
 * @ratekit/memcached: a ratekit store on Memcached 1.6+. Window counters are
 * incremented in place with meta arithmetic; every other algorithm, and
 * every multi-limit policy, is all-or-nothing by compare-and-set. Comes with
 * a small meta-protocol client, so it needs no Memcached library.
 *
 * @module
 */
export { memcachedStore } from './store.js';
export type { MemcachedStore, MemcachedStoreOptions } from './store.js';
export { MemcachedError } from './client.js';
export type { MemcachedErrorCode, ServerAddress } from './client.js';
