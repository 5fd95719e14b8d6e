import { testRefusalCacheDifferential, sharedMemoryStore } from './refusal-cache-differential';

// The memory store made "shared": the refusal cache against the in-memory arithmetic, without a server.
// The remote stores run the same suite against a real server in their own tests.
testRefusalCacheDifferential({ name: 'memory (shared)', makeStore: sharedMemoryStore, runs: Number(process.env.RATEKIT_DIFFERENTIAL_RUNS) || 200 });
