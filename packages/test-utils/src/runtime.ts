/**
 * What runtime tests may take from @ratekit/test-utils: the store conformance suite and its helpers, which
 * need nothing but `@ratekit/core`, fast-check and `node:crypto`'s `randomUUID` (on Node, Bun, Deno and workerd
 * with `nodejs_compat` alike). The runtime matrix (scripts/runtimes) bundles `@ratekit/test-utils` as this
 * module, so a runtime test that imports a server starter (Node-only: child processes, files) fails to bundle
 * instead of failing on the runtime.
 *
 * @module
 */
export { ALGORITHM_TIMELINES, ask, askInTurn, BLOCK_TIMELINE, blockingLimit, freshNamespace, limits, T0, testStore } from './test-store.js';
export type { Ask, StoreTestContext, TestStoreOptions, TimelineRow } from './test-store.js';
