import { builtinModule } from './builtin-module.js';
import type { RateKitError } from './errors.js';

/**
 * Events on `node:diagnostics_channel`, as undici and Fastify publish theirs.
 * Nothing is built or published while a channel has no subscriber, so the
 * decision path costs one `hasSubscribers` read per call.
 *
 * The module is taken with `process.getBuiltinModule` (Node ≥ 20.16 and
 * ≥ 22.3, Bun, Deno 2, and Cloudflare Workers with `nodejs_compat`), never
 * imported: a runtime without it (Workers without `nodejs_compat`, Vercel's
 * Edge runtime, a browser, Node before 20.16) then runs core unchanged, with
 * channels that never have a subscriber, and a bundler has no `node:` import
 * to resolve.
 *
 * @example
 * ```ts
 * import diagnostics_channel from 'node:diagnostics_channel';
 * diagnostics_channel.subscribe('ratekit:decision', (event) => {
 *   const e = event as DecisionEvent;
 *   if (!e.allowed) console.log(`${e.key} refused by ${e.policy}, retry in ${e.retryAfterMs} ms`);
 * });
 * ```
 */
export const CHANNELS = {
  /** Every `consume`, `peek` and `refund` decision: {@link DecisionEvent}. */
  decision: 'ratekit:decision',
  /** Every failed or timed-out store call: {@link StoreErrorEvent}. */
  storeError: 'ratekit:store:error',
  /** Every key the memory store's LRU evicts: {@link MemoryEvictEvent}. */
  memoryEvict: 'ratekit:memory:evict',
} as const;

/** Published on `ratekit:decision` once a decision is made (by the store, or by `onStoreError` when it failed). */
export interface DecisionEvent {
  /** The limiter's `prefix` (its namespace in the store). */
  readonly prefix: string;
  readonly key: string;
  readonly mode: 'consume' | 'peek' | 'refund';
  /** The binding limit's policy name (the one that refused, or the closest to refusing). */
  readonly policy: string;
  readonly allowed: boolean;
  readonly cost: number;
  readonly remaining: number;
  readonly retryAfterMs: number;
  /** The store's `name` (`memory`, `redis`, …). */
  readonly store: string;
  /** How long the store call took, in ms (`performance.now()`); for a failed call, until it failed. */
  readonly storeDurationMs: number;
  /** True when the store failed and `onStoreError` (`'allow'`, `'deny'` or a fallback limiter) decided. */
  readonly fallback: boolean;
  /**
   * `'cache'` when the limiter answered a refusal from its refusal cache
   * without calling the store (`Decision.source`; `storeDurationMs` is then
   * 0), else `'store'` (the store decided, or `onStoreError` when `fallback`).
   */
  readonly source: 'store' | 'cache';
}

/** Published on `ratekit:store:error` for every store failure, whatever `onStoreError` then does. */
export interface StoreErrorEvent {
  readonly prefix: string;
  readonly key: string;
  readonly store: string;
  /** The error (code `ERR_RATEKIT_STORE`; the store's own error is its `cause`). */
  readonly error: RateKitError;
  /** What happens next: `throw` (the call rejects), `allow`, `deny` or `fallback` (a fallback limiter decides). */
  readonly onStoreError: 'throw' | 'allow' | 'deny' | 'fallback';
}

/** Published on `ratekit:memory:evict` when the memory store's LRU evicts a key. */
export interface MemoryEvictEvent {
  readonly key: string;
  /** True when the key was kept aside (less than half its budget left); false when dropped. */
  readonly keptAside: boolean;
  /** Keys held after the eviction (the LRU and those kept aside). */
  readonly size: number;
}

/** What core uses of a `node:diagnostics_channel` channel. */
export interface EventChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** Stands in for every channel where the runtime has no `node:diagnostics_channel`: nobody can subscribe to it. */
const INERT: EventChannel = { hasSubscribers: false, publish() {} };

type DiagnosticsChannel = { channel(name: string): EventChannel };

const channels = builtinModule<DiagnosticsChannel>('node:diagnostics_channel', (found) => typeof found.channel === 'function');
export const decisionChannel: EventChannel = channels?.channel(CHANNELS.decision) ?? INERT;
export const storeErrorChannel: EventChannel = channels?.channel(CHANNELS.storeError) ?? INERT;
export const memoryEvictChannel: EventChannel = channels?.channel(CHANNELS.memoryEvict) ?? INERT;
