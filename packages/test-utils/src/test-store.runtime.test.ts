import { memoryStore } from '@ratekit/core';
import { testStore } from './test-store.js';

// The conformance suite against the in-memory store: the reference every other store is held to.
// A runtime test: jest runs it on Node, scripts/runtimes on Bun, Deno and workerd (against core's built dist).
testStore({ name: 'memory', makeStore: () => memoryStore({ pruneIntervalMs: 0 }) });
// With its defaults, as users make it: pruning on (the part a Worker's start-up and old compatibility dates broke).
testStore({ name: 'memory (default options)', makeStore: () => memoryStore() });
