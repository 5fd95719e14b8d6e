/**
 * @ratekit/synced: a store that decides from counters in this process's
 * memory (synchronously, no network on the hot path) and reconciles them
 * with the other nodes in the background over Redis pub/sub. Eventually
 * consistent, with a stated over-admission bound; window algorithms only.
 *
 * @module
 */

// The store.
export { SYNCED_ALGORITHMS, syncedStore } from './store.js';
export type { SyncedStore, SyncedStoreOptions, SyncedStoreStats } from './store.js';

// How nodes talk: Redis pub/sub, or any broadcast bus.
export { redisTransport } from './transport.js';
export type { IoRedisPubSubLike, NodeRedisPubSubLike, RedisPubSubLike, RedisTransportOptions, SyncTransport } from './transport.js';

// The wire format, for tools that watch the channel.
export { decodeMessage, encodeMessage, FORMAT_VERSION } from './codec.js';
export type { SyncEntry, SyncMessage } from './codec.js';
