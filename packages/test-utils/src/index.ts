/**
 * @ratekit/test-utils (private): what every store package's tests share.
 *
 * - {@link testStore}: the store conformance suite.
 * - {@link testDifferential} / {@link compareSchedule}: the same random schedules on the in-memory store and on a store under test.
 * - {@link testCoalescing} / {@link compareTurns}: turns of concurrent decisions on a store that may coalesce them, against one at a time.
 * - {@link checkAdapterHeaderConsistency} / `rateLimitHeaderInconsistencies`: every response's rate-limit fields agree with each other.
 * - {@link describeWithService}, {@link startRedis}, {@link redisService}, {@link startRedisCluster}, {@link redisClusterService}: real servers for the tests, from the environment or started on loopback.
 *
 * @module
 */
export { ALGORITHM_TIMELINES, ask, askInTurn, BLOCK_TIMELINE, blockingLimit, freshNamespace, limits, T0, testStore } from './test-store.js';
export type { Ask, StoreTestContext, TestStoreOptions, TimelineRow } from './test-store.js';
export { compareSchedule, differ, limitArbitrary, mixedScheduleArbitrary, requestsArbitrary, scheduleArbitrary, testDifferential } from './differential.js';
export type { ArbitraryOptions, DifferentialOptions, Schedule, ScheduledRequest } from './differential.js';
export { cacheScheduleArbitrary, compareWithRefusalCache, sharedMemoryStore, testRefusalCacheDifferential } from './refusal-cache-differential.js';
export type { CacheOperation, CacheRunCounts, CacheSchedule, RefusalCacheDifferentialOptions } from './refusal-cache-differential.js';
export { compareTurns, testCoalescing, turnScheduleArbitrary } from './coalescing.js';
export type { CoalescingOptions, Turn, TurnRequest, TurnSchedule } from './coalescing.js';
export { describeWithService, findBinary, inCI, serviceSource } from './services.js';
export type { RunningServer, ServiceDefinition, ServiceSource } from './services.js';
export { checkAdapterHeaderConsistency, inconsistencies as rateLimitHeaderInconsistencies } from './header-consistency.js';
export type { AdapterRequest, HeaderConsistencyOptions, HeaderReader } from './header-consistency.js';
export { windowWaitArbitrary } from './window-waits.js';
export { askWithWindowMargin } from './window-margin.js';
export { freezeProcesses } from './freeze.js';
export { StallProbe } from './stall-probe.js';
export { freePort, onFreePort } from './ports.js';
export { inOnePollPhase } from './poll-phase.js';
export { privateRedisService, redisService, startRedis } from './redis-server.js';
export type { LocalRedis, StartRedisOptions } from './redis-server.js';
export { parseClusterNodes, redisClusterService, startRedisCluster } from './redis-cluster.js';
export type { ClusterNode, LocalRedisCluster, StartRedisClusterOptions } from './redis-cluster.js';
export { redisSentinelService, startRedisSentinel } from './redis-sentinel.js';
export type { LocalRedisSentinel, StartRedisSentinelOptions } from './redis-sentinel.js';
export { replicationInfo, waitForReplicasInSync } from './replication.js';
export { findInitdb, postgresService, startPostgres } from './postgres-server.js';
export type { LocalPostgres, StartPostgresOptions } from './postgres-server.js';
export { memcachedService, startMemcached } from './memcached-server.js';
export type { LocalMemcached, StartMemcachedOptions } from './memcached-server.js';
export { checkWrongOptions, describeValue, nonFiniteHeaders, wrongOptionProblem, wrongValue } from './wrong-options.js';
export type { WrongOptionOutcome, WrongOptionsCheck } from './wrong-options.js';
export { startUpstashRestServer } from './upstash-rest-server.js';
export type { UpstashRestServer, UpstashRestServerOptions } from './upstash-rest-server.js';
export { upstashEndpoint } from './runtime.js';
export type { UpstashEndpoint } from './runtime.js';
