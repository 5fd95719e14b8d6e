import { randomUUID } from 'node:crypto';
import {
  assertFunction,
  assertInteger,
  assertNonEmptyString,
  assertNonNegative,
  type Decision,
  type EvaluateRequest,
  evaluatePolicy,
  type LimitState,
  RateKitError,
  RateKitOptionError,
  type RateLimitStore,
  type ResolvedLimit,
  UNCHANGED,
} from '@ratekit/core';
import { LRUCache } from 'lru-cache';
import { decodeMessage, encodeMessage, type SyncEntry, type SyncMessage } from './codec.js';
import { type RedisPubSubLike, redisTransport, type SyncTransport } from './transport.js';
import { WindowCounters } from './windows.js';

const STORE_NAME = 'synced';

/**
 * The algorithms the synced store runs: the window counters, whose usage
 * adds up across nodes. The others keep state that is not a sum (a bucket's
 * level and its last refill, a GCRA arrival time, a log of timestamps), so
 * one node's state cannot be merged into another's by addition.
 */
export const SYNCED_ALGORITHMS = ['fixed-window', 'sliding-window'] as const;

/** The most windows one sync message carries; a bigger batch is split into several messages. */
const MAX_WINDOWS_PER_MESSAGE = 1_000;
/** How long `dispose()` waits for its last publish. */
const DISPOSE_FLUSH_TIMEOUT_MS = 1_000;
/** How many peers' sequence numbers are remembered (for missed-message counts). */
const MAX_TRACKED_PEERS = 1_024;

/** Options of {@link syncedStore}: a Redis client (and optionally a subscriber), or a transport. */
export interface SyncedStoreOptions {
  /**
   * Redis shortcut: the publishing connection, a node-redis (`redis` 5+) or
   * ioredis client, connected and owned by the caller. The store builds a
   * {@link redisTransport} from it. Give either `client` or `transport`.
   */
  client?: RedisPubSubLike;
  /**
   * Redis shortcut: a dedicated connection for `SUBSCRIBE`, of the same
   * library as `client`. When omitted the store duplicates `client`
   * (`client.duplicate()`), connects the copy, and closes it in `dispose()`.
   */
  subscriber?: RedisPubSubLike;
  /** Redis shortcut: the pub/sub channel, the same on every node. @default 'ratekit:sync' */
  channel?: string;
  /** Any broadcast bus instead of the Redis shortcut (see {@link SyncTransport}). */
  transport?: SyncTransport;
  /**
   * How often, in ms, this node publishes the usage it admitted since its
   * last message. The over-admission bound grows linearly with it (see the
   * README): a peer can go on admitting for up to one interval (plus
   * delivery time) before this node hears of it. One `unref`'d timer; 0
   * disables it, and usage is then published only by {@link SyncedStore.flush}.
   * @default 100
   */
  syncIntervalMs?: number;
  /** This node's id, unique among the nodes on the channel; a node skips its own messages by it. @default a random UUID */
  nodeId?: string;
  /**
   * The most (namespace, key) pairs held, least recently used evicted first.
   * Every node holds every key active anywhere (peers' usage included), so
   * size it for the whole deployment's active keys. An evicted key starts
   * again from zero on this node: too small a bound over-admits.
   * @default 100_000
   */
  maxKeys?: number;
  /**
   * The most keys with usage not yet published. While the transport is down
   * deltas wait here and are published after it reconnects; past this bound
   * new usage is still counted locally but not shared (counted in
   * `stats().droppedDeltas` and reported to `onError` once per sync).
   * @default 100_000
   */
  maxPendingKeys?: number;
  /** How often, in ms, to drop keys whose windows have all expired. 0 disables the timer (call `prune()` yourself). @default 60_000 */
  pruneIntervalMs?: number;
  /**
   * The clock of the background work (which windows are expired when
   * publishing, receiving and pruning), Unix epoch ms. Use the limiter's
   * clock, so both agree. Decisions use the limiter's `nowMs`.
   * @default Date.now
   */
  now?: () => number;
  /** Receives background failures: publish errors, malformed messages, subscriber outages, dropped deltas. @default console.error */
  onError?: (error: RateKitError) => void;
}

/** Counters of the synced store's background work, for monitoring and tests. */
export interface SyncedStoreStats {
  /** (namespace, key) pairs held. */
  readonly keys: number;
  /** Keys with usage waiting for the next sync. */
  readonly pendingKeys: number;
  /** Messages this node published. */
  readonly published: number;
  /** Window deltas in them. */
  readonly publishedDeltas: number;
  /** Publish attempts that failed (their deltas were kept for the next sync). */
  readonly publishFailures: number;
  /** Syncs skipped because the transport was disconnected (deltas kept). */
  readonly skippedSyncs: number;
  /** Peers' messages applied. */
  readonly received: number;
  /** Window deltas in them. */
  readonly receivedDeltas: number;
  /** Peers' messages that never arrived, from gaps in their sequence numbers (e.g. while this node's subscriber was disconnected). */
  readonly missedMessages: number;
  /** Messages that could not be decoded (reported to `onError`, nothing applied). */
  readonly rejected: number;
  /** Own usage counted locally but not shared because `maxPendingKeys` was reached. */
  readonly droppedDeltas: number;
}

/** The synced store. */
export interface SyncedStore extends RateLimitStore {
  /** Synchronous: decided from local counters, with no network on the hot path. */
  evaluate(request: EvaluateRequest): Decision;
  /** Forgets the key here, and tells peers to subtract what this node counted for it. */
  resetKey(key: string, namespace: string): void;
  /** This node's id on the channel. */
  readonly nodeId: string;
  /**
   * Resolves once the store is subscribed, i.e. hears its peers. Decisions
   * do not wait for it (they use local counts from the start). Rejects when
   * subscribing fails (also reported to `onError`).
   */
  readonly ready: Promise<void>;
  /**
   * Publishes the pending usage now, as the timer would. Resolves once it is
   * published, or kept for the next sync when the transport is down or the
   * publish failed. Never rejects.
   */
  flush(): Promise<void>;
  /** Drops keys whose windows have all expired at `nowMs`. Returns how many were dropped. */
  prune(nowMs?: number): number;
  stats(): SyncedStoreStats;
  /**
   * Stops the timers, publishes the pending usage one last time (waiting at
   * most 1 s), unsubscribes and closes the transport (never the caller's
   * Redis clients). The store still answers afterwards, from local counts only.
   */
  dispose(): Promise<void>;
}

/** The usage of one limit under one key. */
interface Slot {
  readonly id: string;
  readonly counters: WindowCounters;
}

/** One (namespace, key) pair: a slot per limit id, usually 1–2. */
interface Entry {
  readonly namespace: string;
  readonly key: string;
  readonly slots: Slot[];
}

/**
 * A store that keeps window counters in this process's memory, decides
 * synchronously from them, and reconciles them with the other nodes in the
 * background: every `syncIntervalMs` it publishes the usage it admitted
 * since its last message as one batch, and adds the batches its peers
 * publish to its own counts.
 *
 * - **Hot path**: one LRU lookup and the core's arithmetic, no I/O, no
 *   Promise. The limiter's `onStoreError` and `storeTimeoutMs` never come
 *   into play, because decisions do not touch the network.
 * - **Consistency**: eventual, not atomic. A node does not see what its peers
 *   admitted since their last message, so a deployment of `n` nodes each
 *   receiving `r` requests/ms can admit, per window, up to
 *   `min(n × limit, limit + (n − 1) × r × (syncIntervalMs + delivery))`
 *   (derived and measured in the README).
 * - **Algorithms**: `fixed-window` and `sliding-window` only
 *   ({@link SYNCED_ALGORITHMS}). Windows are aligned to multiples of
 *   `windowMs` since the epoch on every node, so nodes agree on window
 *   boundaries; this makes `fixed-window` reset at aligned instants rather
 *   than one window after a key's first hit as in the in-memory store.
 * - **`shared: true`**: nodes share one budget per key, eventually.
 * - **`clock: 'caller'`**: windows come from the limiter's `nowMs`; keep the
 *   nodes' clocks synchronised (NTP), since a skewed node counts near a
 *   boundary into a window its peers consider closed or not yet open.
 * - **Disconnects**: decisions go on from local counts; unsent usage is kept
 *   (up to `maxPendingKeys` keys) and published after the reconnect. Usage
 *   peers published while this node's subscriber was down is lost to it
 *   (Redis pub/sub keeps nothing), so it under-counts until those windows end.
 *
 * @throws {RateKitOptionError} on a bad option: neither or both of `client` and `transport`, a client
 *   that is not node-redis or ioredis, a negative `syncIntervalMs`, a `maxKeys` or `maxPendingKeys`
 *   below 1, etc. `evaluate` throws a {@link RateKitOptionError} (option `limits[i].algorithm`) for a
 *   limit whose algorithm is not a window counter.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { createLimiter } from '@ratekit/core';
 * import { syncedStore } from '@ratekit/synced';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const store = syncedStore({ client, syncIntervalMs: 50 });
 * const limiter = createLimiter({ limits: { algorithm: 'sliding-window', limit: 100, windowMs: 60_000 }, store });
 * const decision = limiter.consume('user:42'); // a Decision, not a Promise
 * ```
 */
export function syncedStore(options: SyncedStoreOptions): SyncedStore {
  // Not assertObject: narrowing these all-optional options to a record would lose their types.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new RateKitOptionError('options', 'an object', options);
  const syncIntervalMs = options.syncIntervalMs ?? 100;
  assertNonNegative('syncIntervalMs', syncIntervalMs, ' of milliseconds');
  assertTimerRange('syncIntervalMs', syncIntervalMs);
  const nodeId = options.nodeId ?? randomUUID();
  assertNonEmptyString('nodeId', nodeId);
  const maxKeys = options.maxKeys ?? 100_000;
  assertInteger('maxKeys', maxKeys, 1);
  const maxPendingKeys = options.maxPendingKeys ?? 100_000;
  assertInteger('maxPendingKeys', maxPendingKeys, 1);
  const pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  assertNonNegative('pruneIntervalMs', pruneIntervalMs, ' of milliseconds');
  assertTimerRange('pruneIntervalMs', pruneIntervalMs);
  const now = options.now ?? Date.now;
  assertFunction('now', now);
  const onError = options.onError ?? ((error: RateKitError) => console.error(error));
  assertFunction('onError', onError);
  const transport = transportFrom(options, onError);

  const cache = new LRUCache<string, Entry>({ max: maxKeys });
  /** Entries with unpublished usage; held here even if the LRU evicts them, so their usage is still published. */
  const dirty = new Set<Entry>();
  const peers = new Map<string, number>();
  const counts = {
    published: 0,
    publishedDeltas: 0,
    publishFailures: 0,
    skippedSyncs: 0,
    received: 0,
    receivedDeltas: 0,
    missedMessages: 0,
    rejected: 0,
    droppedDeltas: 0,
  };
  let droppedSinceReport = 0;
  let seq = 0;
  let disposed = false;

  function entryFor(namespace: string, key: string, create: boolean): Entry | undefined {
    // The namespace's length makes the boundary between namespace and key unambiguous.
    const id = `${namespace.length}:${namespace}${key}`;
    let entry = cache.get(id);
    if (entry === undefined && create) {
      entry = { namespace, key, slots: [] };
      cache.set(id, entry);
    }
    return entry;
  }

  function slotFor(entry: Entry, limitId: string, create: boolean): WindowCounters | undefined {
    for (const slot of entry.slots) if (slot.id === limitId) return slot.counters;
    if (!create) return undefined;
    const counters = new WindowCounters();
    entry.slots.push({ id: limitId, counters });
    return counters;
  }

  /** Adds this node's `delta` to a window, queued for the next sync unless the pending bound is reached. */
  function addOwn(entry: Entry, counters: WindowCounters, startMs: number, expiresAtMs: number, delta: number, nowMs: number): void {
    if (counters.size >= 3) counters.prune(nowMs);
    let share = true;
    if (!dirty.has(entry)) {
      if (dirty.size >= maxPendingKeys) {
        share = false;
        counts.droppedDeltas++;
        droppedSinceReport++;
      } else dirty.add(entry);
    }
    counters.add(startMs, expiresAtMs, delta, share);
  }

  function assertSupports(limits: readonly ResolvedLimit[], path: string): void {
    limits.forEach((limit, i) => {
      if (limit.algorithm !== 'fixed-window' && limit.algorithm !== 'sliding-window') throw unsupported(limit, i, path);
      if (limit.blockDurationMs > 0) throw unblockable(limit, i, path);
    });
  }

  function evaluate(request: EvaluateRequest): Decision {
    const { key, namespace, limits, nowMs } = request;
    let entry = entryFor(namespace, key, false);
    const states: LimitState[] = [];
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i]!;
      if (limit.algorithm !== 'fixed-window' && limit.algorithm !== 'sliding-window') throw unsupported(limit, i);
      if (limit.blockDurationMs > 0) throw unblockable(limit, i);
      const counters = entry === undefined ? undefined : slotFor(entry, limit.id, false);
      const W = limit.windowMs;
      const startMs = Math.floor(nowMs / W) * W;
      const current = counters === undefined ? 0 : counters.used(startMs);
      // The core's own state layouts, so its arithmetic decides: [start, used] and [start, previous, current].
      states.push(limit.algorithm === 'fixed-window' ? [startMs, current] : [startMs, counters === undefined ? 0 : counters.used(startMs - W), current]);
    }
    const { decision, writes } = evaluatePolicy(states, limits, request.cost, request.mode, nowMs);
    for (let i = 0; i < limits.length; i++) {
      const write = writes[i];
      if (write === UNCHANGED || write === undefined) continue;
      const before = states[i]!;
      // The last number of both layouts is the current window's usage.
      const delta = write[write.length - 1]! - before[before.length - 1]!;
      if (delta === 0) continue;
      const limit = limits[i]!;
      entry ??= entryFor(namespace, key, true)!;
      const startMs = before[0]!;
      addOwn(entry, slotFor(entry, limit.id, true)!, startMs, startMs + lifetimeMs(limit), delta, nowMs);
    }
    return decision;
  }

  function receive(text: string): void {
    let message: SyncMessage;
    try {
      message = decodeMessage(text);
    } catch (error) {
      counts.rejected++;
      onError(new RateKitError('ERR_RATEKIT_STORE', `The synced store received a malformed message: ${(error as Error).message}`, { cause: error }));
      return;
    }
    if (message.node === nodeId) return;
    trackSequence(message.node, message.seq);
    const nowMs = now();
    for (const { namespace, key, limitId, windows } of message.entries) {
      let counters: WindowCounters | undefined;
      for (let i = 0; i < windows.length; i += 3) {
        const expiresAtMs = windows[i + 1]!;
        // A window that has closed here no longer matters (the sender's clock or sync lagged).
        if (expiresAtMs <= nowMs) continue;
        if (counters === undefined) {
          counters = slotFor(entryFor(namespace, key, true)!, limitId, true)!;
          if (counters.size >= 3) counters.prune(nowMs);
        }
        counters.add(windows[i]!, expiresAtMs, windows[i + 2]!, false);
        counts.receivedDeltas++;
      }
    }
    counts.received++;
  }

  function trackSequence(peer: string, received: number): void {
    const last = peers.get(peer);
    if (last !== undefined && received > last + 1) counts.missedMessages += received - last - 1;
    // A lower number is a restarted peer that kept its id: start over from it.
    peers.delete(peer);
    peers.set(peer, received);
    if (peers.size > MAX_TRACKED_PEERS) peers.delete(peers.keys().next().value!);
  }

  async function publishPending(): Promise<void> {
    queued = false;
    if (droppedSinceReport > 0) {
      onError(new RateKitError('ERR_RATEKIT_STORE', `The synced store kept ${droppedSinceReport} usage deltas local: ${maxPendingKeys} keys (maxPendingKeys) were already waiting to be published`));
      droppedSinceReport = 0;
    }
    if (dirty.size === 0) return;
    if (!transport.connected) {
      counts.skippedSyncs++;
      return;
    }
    const nowMs = now();
    const batch: Array<{ entry: Entry; slot: Slot; windows: number[] }> = [];
    for (const entry of dirty) {
      for (const slot of entry.slots) {
        const windows: number[] = [];
        if (slot.counters.takePending(nowMs, windows) > 0) batch.push({ entry, slot, windows });
      }
    }
    dirty.clear();
    let at = 0;
    while (at < batch.length) {
      const entries: SyncEntry[] = [];
      let size = 0;
      let end = at;
      while (end < batch.length && (size === 0 || size + batch[end]!.windows.length / 3 <= MAX_WINDOWS_PER_MESSAGE)) {
        const { entry, slot, windows } = batch[end]!;
        entries.push({ namespace: entry.namespace, key: entry.key, limitId: slot.id, windows });
        size += windows.length / 3;
        end++;
      }
      try {
        await transport.publish(encodeMessage({ node: nodeId, seq: seq + 1, entries }));
      } catch (error) {
        counts.publishFailures++;
        for (let i = at; i < batch.length; i++) restore(batch[i]!);
        onError(
          new RateKitError('ERR_RATEKIT_STORE', `The synced store could not publish its usage (kept for the next sync): ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
        );
        return;
      }
      seq++;
      counts.published++;
      counts.publishedDeltas += size;
      at = end;
    }
  }

  function restore({ entry, slot, windows }: { entry: Entry; slot: Slot; windows: number[] }): void {
    for (let i = 0; i < windows.length; i += 3) slot.counters.restorePending(windows[i]!, windows[i + 1]!, windows[i + 2]!);
    dirty.add(entry);
  }

  // One sync at a time, in order. A timer tick while one is in flight queues one more right
  // after it (never more than one), so a slow publish delays the next one instead of skipping it.
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  function sync(): Promise<void> {
    chain = chain.then(publishPending).catch((error: unknown) => {
      onError(new RateKitError('ERR_RATEKIT_STORE', `The synced store's sync failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
    });
    return chain;
  }

  function prune(nowMs: number = now()): number {
    const doomed: string[] = [];
    for (const [id, entry] of cache.entries()) {
      for (let i = entry.slots.length - 1; i >= 0; i--) {
        const { counters } = entry.slots[i]!;
        if (counters.prune(nowMs) === 0) entry.slots.splice(i, 1);
      }
      if (entry.slots.length === 0) doomed.push(id);
    }
    for (const id of doomed) cache.delete(id);
    return doomed.length;
  }

  const syncTimer =
    syncIntervalMs > 0
      ? setInterval(() => {
          if (queued) return;
          queued = true;
          void sync();
        }, syncIntervalMs)
      : undefined;
  syncTimer?.unref();
  const pruneTimer = pruneIntervalMs > 0 ? setInterval(() => prune(), pruneIntervalMs) : undefined;
  pruneTimer?.unref();

  // Through a Promise constructor, so a transport that throws synchronously rejects `ready` instead of escaping.
  const ready = new Promise<void>((resolve) => resolve(transport.subscribe(receive))).catch((error: unknown) => {
    const wrapped = new RateKitError('ERR_RATEKIT_STORE', `The synced store could not subscribe: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    // A subscription cut short by dispose() is no failure worth reporting.
    if (!disposed) onError(wrapped);
    throw wrapped;
  });
  // Awaiting `ready` is optional: an unobserved failure must not crash the process (it went to onError).
  ready.catch(() => {});

  return {
    name: STORE_NAME,
    shared: true,
    clock: 'caller',
    nodeId,
    ready,
    evaluate,
    assertSupports,
    resetKey(key, namespace) {
      const entry = entryFor(namespace, key, false);
      if (entry === undefined) return;
      const nowMs = now();
      for (const slot of entry.slots) {
        for (const [startMs, expiresAtMs, raw] of slot.counters.snapshot()) {
          if (raw > 0) addOwn(entry, slot.counters, startMs, expiresAtMs, -raw, nowMs);
        }
      }
    },
    flush: () => (disposed ? chain : sync()),
    prune,
    stats: () => ({ keys: cache.size, pendingKeys: dirty.size, ...counts }),
    async dispose() {
      if (disposed) return chain;
      disposed = true;
      if (syncTimer !== undefined) clearInterval(syncTimer);
      if (pruneTimer !== undefined) clearInterval(pruneTimer);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([sync(), new Promise<void>((resolve) => (timer = setTimeout(resolve, DISPOSE_FLUSH_TIMEOUT_MS)))]);
      clearTimeout(timer);
      // Not awaiting `ready`: against an unreachable Redis it may never settle; closing the transport ends it.
      await transport.close().catch((error: unknown) => {
        onError(new RateKitError('ERR_RATEKIT_STORE', `The synced store could not close its transport: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
      });
    },
  };
}

/** The longest delay a Node.js timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

function assertTimerRange(option: string, value: number): void {
  if (value > MAX_TIMER_MS) throw new RateKitOptionError(option, `at most ${MAX_TIMER_MS} ms (the longest Node.js timer)`, value);
}

/** How long a window's count matters: a fixed window only while it is open, a sliding window also as the previous one. */
function lifetimeMs(limit: ResolvedLimit): number {
  return limit.algorithm === 'fixed-window' ? limit.windowMs : 2 * limit.windowMs;
}

function unsupported(limit: ResolvedLimit, index: number, path = 'limits'): RateKitOptionError {
  return new RateKitOptionError(
    `${path}[${index}].algorithm`,
    `one of ${SYNCED_ALGORITHMS.map((a) => `'${a}'`).join(', ')} (the synced store merges usage by addition, which only window counters allow)`,
    limit.algorithm,
  );
}

/**
 * A block is a per-key "blocked until" time, not a count: nodes cannot merge
 * it by addition, and a node that had not heard of it would admit the key.
 */
function unblockable(limit: ResolvedLimit, index: number, path = 'limits'): RateKitOptionError {
  return new RateKitOptionError(
    `${path}[${index}].blockDurationMs`,
    '0 or unset (the synced store merges usage by addition, and a block is a time, not a count: use a shared store such as @ratekit/redis for blocks)',
    limit.blockDurationMs,
  );
}

function transportFrom(options: SyncedStoreOptions, onError: (error: RateKitError) => void): SyncTransport {
  if (options.transport !== undefined) {
    for (const redisOnly of ['client', 'subscriber', 'channel'] as const) {
      if (options[redisOnly] !== undefined) throw new RateKitOptionError(redisOnly, 'unset when `transport` is given', options[redisOnly]);
    }
    const t = options.transport as Partial<SyncTransport>;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
    if (typeof t !== 'object' || t === null || typeof t.publish !== 'function' || typeof t.subscribe !== 'function' || typeof t.close !== 'function') {
      throw new RateKitOptionError('transport', 'a SyncTransport (publish, subscribe, connected, close)', options.transport);
    }
    return options.transport;
  }
  if (options.client === undefined) throw new RateKitOptionError('client', 'a node-redis or ioredis client (or give `transport`)', undefined);
  return redisTransport({
    client: options.client,
    ...(options.subscriber === undefined ? {} : { subscriber: options.subscriber }),
    ...(options.channel === undefined ? {} : { channel: options.channel }),
    onError,
  });
}
