/**
 * @ratekit/core: rate-limiting algorithms, all-or-nothing policies, the store
 * contract, the in-memory store and the RateLimit header formatting shared by
 * every ratekit adapter.
 *
 * @module
 */

// Build and use limiters.
export { consumeInAnyForm, createLimiter } from './limiter.js';
export type { CallOptions, Limiter, LimiterOptions, LimitsOption, StoreErrorPolicy, WaitOptions } from './limiter.js';
export { stackLimiters } from './stack.js';
export { DEFAULT_STORE_TIMEOUT_MS, MAX_TIMER_MS, resolveStoreTimeoutMs, storeCallBound, withStoreTimeout } from './store-timeout.js';
export type { StoreCallBound } from './store-timeout.js';
export { DEFAULT_REFUSAL_CACHE_KEYS } from './refusal-cache.js';
export type { LimiterStack } from './stack.js';

// Limits and decisions: the data every adapter and store exchanges.
export { ALGORITHMS, MAX_BLOCK_DURATION_MS, resolveLimit, unnamedLimitId } from './limit.js';
export type { AlgorithmName, LimitOptions, ResolvedLimit } from './limit.js';
export type { Decision, LimitDecision } from './decision.js';

// The store contract, the in-memory store, and what remote stores need to build decisions.
export type { EvaluateRequest, MaybePromise, RateLimitStore } from './stores/types.js';
export { memoryStore } from './stores/memory.js';
export type { MemoryStore, MemoryStoreOptions } from './stores/memory.js';
export { evaluateLimit, evaluatePolicy, isBlocked, refundLimit, stepLimit, UNCHANGED } from './policy.js';
export type { EvaluateMode, LimitOutcome, PolicyOutcome } from './policy.js';
export { buildDecision } from './decision.js';
export { DEFAULT_BATCHES_IN_FLIGHT, MIN_EARLY_BATCH_SIZE, resolveCoalescing, turnCoalescer } from './stores/coalescer.js';
export type { CoalescingOptions, Pending, TurnCoalescer, TurnCoalescerOptions } from './stores/coalescer.js';
export { algorithms } from './algorithms/index.js';
export type { Algorithm, LimitState, Step } from './algorithms/index.js';

// Errors, and the option checks adapters reuse so their errors read the same.
export { RateKitError, RateKitOptionError } from './errors.js';
export type { RateKitErrorCode } from './errors.js';
export { assertFunction, assertInteger, assertKnownKeys, assertNonEmptyString, assertNonNegative, assertObject, assertOneOf, assertPositive } from './validate.js';

// Client keys: IP grouping shared by every adapter, and the trusted-proxy rule of those that read X-Forwarded-For.
export { assertSubnet, ipKeyGenerator } from './keys.js';
export { clientAddress } from './proxy-chain.js';
export type { TrustProxy } from './proxy-chain.js';

// The gate: the request pipeline every adapter stands on.
export { createGate, DELAY_HEADER } from './gate/gate.js';
export type { FieldWriter, Gate, GateAdapter, GateDecided, GateOutcome, GateUnlimited } from './gate/gate.js';
export { GATE_OPTIONS, resolveGateOptions } from './gate/options.js';
export type { GateAdapterSpec, GateOptions, KeyResult, MessageBody, ResolvedGateOptions } from './gate/options.js';
export { resolveRefundOptions } from './gate/refund-options.js';
export type { RefundOptions, RefundOptionsInput } from './gate/refund-options.js';
export { inBackground } from './gate/background.js';
export type { WaitUntil } from './gate/background.js';
export { keyedHeaderList } from './gate/header-list.js';
export type { KeyedHeaderList } from './gate/header-list.js';
export { holdFor } from './gate/hold.js';

// Events on node:diagnostics_channel (metrics, tracing, logs).
export { CHANNELS } from './events.js';
export type { DecisionEvent, MemoryEvictEvent, StoreErrorEvent } from './events.js';

// RateLimit-* / Retry-After formatting shared by every adapter.
export { assertPolicyName, DEFAULT_REFUSAL_MESSAGE, defaultPolicyName, partitionKey, rateLimitHeaders, resolveHeaderOptions, retryAfterSeconds, STANDARD_HEADER_DRAFTS } from './headers/index.js';
export type { HeaderList, HeaderOptions, HeaderOptionsInput, HeaderStyle, LegacyResetFormat, StandardHeaders } from './headers/index.js';
export { headerListOf } from './headers/memo.js';
export { advertisedQuota, bindingLimit, bindingQuota } from './headers/advertised-policy.js';
