/**
 * Test helpers (not exported from the package): an in-process broadcast bus
 * standing in for Redis pub/sub, with switches for the failures the store
 * must survive.
 */
import type { SyncTransport } from './transport.js';

/** One node's end of a {@link MemoryBus}. */
export interface MemoryBusTransport extends SyncTransport {
  /** What `connected` answers: false makes the store keep its deltas. */
  connected: boolean;
  /** While false, messages published by others are not delivered to this node (they are lost, as on Redis pub/sub). */
  listening: boolean;
  /** While true, `publish` rejects without delivering. */
  failing: boolean;
  /** Messages this node published, as sent. */
  readonly sent: string[];
  /** True once `close()` was called. */
  readonly closed: boolean;
}

/**
 * A broadcast bus in memory: `publish` delivers the message synchronously to
 * every listening subscriber (the sender included, as Redis does), then
 * resolves. Delivery is at most once and in order, as on Redis pub/sub.
 */
export class MemoryBus {
  private readonly subscribers = new Set<{ end: MemoryBusTransport; onMessage: (message: string) => void }>();

  /** A new node's end of the bus. */
  transport(): MemoryBusTransport {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the transport's methods below have their own `this`
    const bus = this;
    const sent: string[] = [];
    let closed = false;
    let subscription: { end: MemoryBusTransport; onMessage: (message: string) => void } | undefined;
    const end: MemoryBusTransport = {
      connected: true,
      listening: true,
      failing: false,
      sent,
      get closed() {
        return closed;
      },
      async publish(message) {
        if (end.failing) throw new Error('publish failed (test)');
        sent.push(message);
        bus.deliver(message);
      },
      async subscribe(onMessage) {
        subscription = { end, onMessage };
        bus.subscribers.add(subscription);
      },
      async close() {
        closed = true;
        if (subscription !== undefined) bus.subscribers.delete(subscription);
      },
    };
    return end;
  }

  /** Delivers a message as if a node had published it (e.g. a malformed one). */
  deliver(message: string): void {
    for (const { end, onMessage } of this.subscribers) if (end.listening) onMessage(message);
  }
}

/** Parameters of {@link simulateWindow}. */
export interface SimulationOptions {
  /** How many nodes share the limit. */
  nodes: number;
  /** Requests each node receives per ms (may be fractional: arrivals are spread evenly). */
  ratePerMs: number;
  /** Every node publishes every this many ms... */
  syncIntervalMs: number;
  /** ...at these offsets into the interval, one per node (in-phase when all equal). @default all 0 */
  phasesMs?: readonly number[];
  /** The shared limit per window (fixed window). */
  limit: number;
  /** The window. @default 1_000 */
  windowMs?: number;
}

/**
 * Runs one fixed window of `nodes` synced stores on a {@link MemoryBus} in
 * virtual time, 1 ms per step: in each step every node first gets the
 * requests due by then, then the nodes whose sync falls on it publish
 * (delivery is instant). Returns how many requests were admitted in all.
 * Deterministic: no timers, no real clock.
 */
export async function simulateWindow(syncedStore: typeof import('./store.js').syncedStore, resolveLimit: typeof import('@ratekit/core').resolveLimit, options: SimulationOptions): Promise<number> {
  const windowMs = options.windowMs ?? 1_000;
  const start = Math.ceil(1_700_000_000_000 / windowMs) * windowMs;
  let t = start;
  const bus = new MemoryBus();
  const limits = [resolveLimit({ limit: options.limit, windowMs })];
  // No timers: syncs are driven by the loop below.
  const stores = Array.from({ length: options.nodes }, (_, i) => syncedStore({ transport: bus.transport(), nodeId: `n${i}`, now: () => t, syncIntervalMs: 0, pruneIntervalMs: 0, maxKeys: 16 }));
  const sent = stores.map(() => 0);
  let admitted = 0;
  for (let step = 1; step < windowMs; step++) {
    t = start + step;
    for (let i = 0; i < stores.length; i++) {
      const due = Math.floor(options.ratePerMs * step + 1e-9);
      for (; sent[i]! < due; sent[i]!++) {
        if (stores[i]!.evaluate({ key: 'k', namespace: '', limits, cost: 1, mode: 'consume', nowMs: t }).allowed) admitted++;
      }
    }
    for (let i = 0; i < stores.length; i++) {
      if ((step - (options.phasesMs?.[i] ?? 0)) % options.syncIntervalMs === 0) await stores[i]!.flush();
    }
  }
  for (const store of stores) await store.dispose();
  return admitted;
}

/** Parameters of {@link runLoad}. */
export interface LoadOptions {
  /** One store per node; each gets its own limiter on the real clock. */
  stores: readonly import('./store.js').SyncedStore[];
  /** Requests each node sends per second, spread evenly. */
  ratePerSecond: number;
  /** The shared limit per window (fixed window). */
  limit: number;
  windowMs: number;
  /** How many whole windows to measure; the run starts at the next window boundary. */
  windows: number;
  createLimiter: typeof import('@ratekit/core').createLimiter;
}

/** What {@link runLoad} saw. */
export interface LoadResult {
  /** Requests admitted in each measured window, all nodes together. */
  admitted: number[];
  /** Requests sent per window, all nodes together. */
  sent: number[];
  /**
   * The longest the event loop was held up beyond the driver's tick, in ms:
   * how late any timer of this process (the stores' sync timers included)
   * may have fired.
   */
  maxStallMs: number;
}

/** The driver's tick, in ms. */
const TICK_MS = 2;

/**
 * Sends each node's requests at `ratePerSecond` on the real clock for whole
 * windows: every 2 ms tick, each node gets the requests due by then
 * (`⌊rate × elapsed⌋` minus those already sent), so a late tick catches up
 * with a burst. Counts admissions per window by the decision's clock.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { stores, ratePerSecond, limit, windowMs, windows } = options;
  const limiters = stores.map((store) => options.createLimiter({ limits: { limit, windowMs }, store }));
  const first = Math.ceil(Date.now() / windowMs) * windowMs;
  await new Promise((resolve) => setTimeout(resolve, first - Date.now()));
  const end = first + windows * windowMs;
  const admitted = new Array<number>(windows).fill(0);
  const sentPerWindow = new Array<number>(windows).fill(0);
  const sent = stores.map(() => 0);
  let maxStallMs = 0;
  let last = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = Date.now();
      maxStallMs = Math.max(maxStallMs, now - last - TICK_MS);
      last = now;
      for (let i = 0; i < limiters.length; i++) {
        const due = Math.floor((ratePerSecond * (Math.min(now, end) - first)) / 1_000);
        for (; sent[i]! < due; sent[i]!++) {
          const decision = limiters[i]!.consume('k') as import('@ratekit/core').Decision;
          const w = Math.floor((decision.nowMs - first) / windowMs);
          if (w < 0 || w >= windows) continue;
          sentPerWindow[w]!++;
          if (decision.allowed) admitted[w]!++;
        }
      }
      if (now >= end) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  return { admitted, sent: sentPerWindow, maxStallMs };
}

/**
 * Wraps a transport to measure delivery: the time from `publish` to the
 * handler on any node, for nodes in this process (they share `sentAt`).
 * Messages are unique (node id and sequence number), so their text keys the map.
 */
export function timedTransport(inner: SyncTransport, sentAt: Map<string, number>, delivery: { maxMs: number }): SyncTransport {
  return {
    get connected() {
      return inner.connected;
    },
    publish(message) {
      sentAt.set(message, Date.now());
      return inner.publish(message);
    },
    subscribe(onMessage) {
      return inner.subscribe((message) => {
        const at = sentAt.get(message);
        if (at !== undefined) delivery.maxMs = Math.max(delivery.maxMs, Date.now() - at);
        onMessage(message);
      });
    },
    close: () => inner.close(),
  };
}
