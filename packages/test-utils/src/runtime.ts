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
// The differential suite (fast-check and the in-memory store): for edge stores that run only on their runtime (Deno KV).
export { compareSchedule, testDifferential } from './differential.js';
export type { DifferentialOptions, Schedule } from './differential.js';
// A first request where its window has time to spare (tests that expect a refusal to last).
export { askWithWindowMargin } from './window-margin.js';

/** Where an edge test reaches the matrix's Upstash REST endpoint (a real Redis behind it): `new Redis(upstashEndpoint())`. */
export interface UpstashEndpoint {
  readonly url: string;
  readonly token: string;
}

/**
 * The Upstash REST endpoint the runtime matrix starts on Node for the `*.edge.test.ts` files (scripts/runtimes/
 * services.mjs: a throwaway redis-server behind upstash-rest-server.ts), as the harness hands it
 * to the bundle.
 * @throws {Error} outside the matrix (jest leaves `*.edge.test.ts` files alone; on Node, start the endpoint yourself)
 */
export function upstashEndpoint(): UpstashEndpoint {
  const matrix = (globalThis as { __RATEKIT_MATRIX__?: { upstash?: UpstashEndpoint } }).__RATEKIT_MATRIX__;
  if (matrix?.upstash === undefined) throw new Error('upstashEndpoint(): only in the runtime matrix (a *.edge.test.ts file run by scripts/runtimes/run.mjs)');
  return matrix.upstash;
}
