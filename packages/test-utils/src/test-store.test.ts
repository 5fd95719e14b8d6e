import { memoryStore } from '@ratekit/core';
import { testStore } from './test-store.js';

// The conformance suite against the in-memory store: the reference every other store is held to.
testStore({ name: 'memory', makeStore: () => memoryStore({ pruneIntervalMs: 0 }) });
