/**
 * @ratekit/redis: a ratekit store on Redis. Every decision, with any
 * algorithm and any number of limits, is one atomic Lua script call on the
 * Redis server clock; works with node-redis and ioredis, on a single Redis or
 * on Redis Cluster.
 *
 * @module
 */
export { redisStore } from './store.js';
export type { IoRedisClientLike, NodeRedisClientLike, RedisClientLike, RedisStore, RedisStoreOptions } from './store.js';
export { DECISION_BATCH_FUNCTION, DECISION_BATCH_SCRIPT, DECISION_BATCH_SCRIPT_SHA, DECISION_CODE, DECISION_FUNCTION, DECISION_LIBRARY, DECISION_SCRIPT, DECISION_SCRIPT_SHA } from './scripts.js';
export { batchScript, redisScriptTransport, scriptBatcher } from './transport.js';
export type { RedisScriptTransport, ScriptBatcher } from './transport.js';
