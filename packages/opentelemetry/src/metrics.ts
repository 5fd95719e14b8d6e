import diagnostics_channel from 'node:diagnostics_channel';
import { type Attributes, type MeterProvider, metrics } from '@opentelemetry/api';
import { CHANNELS, type DecisionEvent, type MemoryEvictEvent, type MemoryStore, RateKitOptionError, type StoreErrorEvent } from '@ratekit/core';

/** Options of {@link instrumentRateKit}. */
export interface RateKitMetricsOptions {
  /** Where the instruments are made. @default the global provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
  /** The meter's name. @default '@ratekit/opentelemetry' */
  meterName?: string;
}

/** What {@link instrumentRateKit} returns. */
export interface RateKitMetrics {
  /**
   * Reports a memory store's size as the gauge `ratekit.memory.size`,
   * attribute `ratekit.store.name`. Returns a function that stops it.
   */
  observeMemoryStore(store: Pick<MemoryStore, 'size'>, name: string): () => void;
  /** Unsubscribes from every channel and stops every gauge callback. */
  disable(): void;
}

/**
 * Records ratekit's `node:diagnostics_channel` events (see @ratekit/core's
 * `CHANNELS`) as OpenTelemetry metrics:
 *
 * | instrument | kind | unit | attributes |
 * |---|---|---|---|
 * | `ratekit.decisions` | counter | `{decision}` | `ratekit.prefix`, `ratekit.policy`, `ratekit.mode`, `ratekit.outcome` (`allowed`/`refused`), `ratekit.fallback`, `ratekit.source` (`store`/`cache`) |
 * | `ratekit.store.duration` | histogram | `ms` | `ratekit.store`, `ratekit.mode`, `ratekit.fallback` (store calls only: not the refusals answered from the refusal cache) |
 * | `ratekit.store.errors` | counter | `{error}` | `ratekit.store`, `ratekit.on_store_error` |
 * | `ratekit.store.fallbacks` | counter | `{decision}` | `ratekit.store`, `ratekit.on_store_error` (`allow`/`deny`/`fallback`) |
 * | `ratekit.memory.evictions` | counter | `{key}` | `ratekit.memory.kept_aside` |
 * | `ratekit.memory.size` | gauge | `{key}` | `ratekit.store.name` (stores given to `observeMemoryStore`) |
 *
 * Keys are never attributes (their number is unbounded). Subscribing makes
 * the limiter time each store call and build one event per decision; with
 * no subscriber (before this call or after `disable()`) core builds nothing.
 *
 * @throws {RateKitOptionError} when `meterName` is not a non-empty string
 * @example
 * ```ts
 * import { instrumentRateKit } from '@ratekit/opentelemetry';
 * const instrumentation = instrumentRateKit(); // after your OpenTelemetry SDK is set up
 * instrumentation.observeMemoryStore(store, 'api');
 * ```
 */
export function instrumentRateKit(options: RateKitMetricsOptions = {}): RateKitMetrics {
  const meterName = options.meterName ?? '@ratekit/opentelemetry';
  if (typeof meterName !== 'string' || meterName === '') throw new RateKitOptionError('meterName', 'a non-empty string', meterName);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(meterName);

  const decisions = meter.createCounter('ratekit.decisions', { unit: '{decision}', description: 'Rate-limit decisions, by policy and outcome' });
  const storeDuration = meter.createHistogram('ratekit.store.duration', { unit: 'ms', description: 'Time a store call took (until it failed, for a failed one)' });
  const storeErrors = meter.createCounter('ratekit.store.errors', { unit: '{error}', description: 'Store calls that failed or timed out' });
  const fallbacks = meter.createCounter('ratekit.store.fallbacks', { unit: '{decision}', description: 'Decisions made by onStoreError because the store failed' });
  const evictions = meter.createCounter('ratekit.memory.evictions', { unit: '{key}', description: 'Keys the memory store evicted from its LRU' });
  const size = meter.createObservableGauge('ratekit.memory.size', { unit: '{key}', description: 'Keys held by a memory store' });

  const onDecision = (message: unknown) => {
    const e = message as DecisionEvent;
    const attributes: Attributes = {
      'ratekit.prefix': e.prefix,
      'ratekit.policy': e.policy,
      'ratekit.mode': e.mode,
      'ratekit.outcome': e.allowed ? 'allowed' : 'refused',
      'ratekit.fallback': e.fallback,
      // 'cache': a refusal the limiter answered from its refusal cache, without a store call.
      'ratekit.source': e.source,
    };
    decisions.add(1, attributes);
    if (e.source === 'cache') return;
    storeDuration.record(e.storeDurationMs, { 'ratekit.store': e.store, 'ratekit.mode': e.mode, 'ratekit.fallback': e.fallback });
  };
  const onStoreError = (message: unknown) => {
    const e = message as StoreErrorEvent;
    const attributes = { 'ratekit.store': e.store, 'ratekit.on_store_error': e.onStoreError };
    storeErrors.add(1, attributes);
    if (e.onStoreError !== 'throw') fallbacks.add(1, attributes);
  };
  const onEvict = (message: unknown) => {
    evictions.add(1, { 'ratekit.memory.kept_aside': (message as MemoryEvictEvent).keptAside });
  };
  const subscriptions: Array<[string, (message: unknown) => void]> = [
    [CHANNELS.decision, onDecision],
    [CHANNELS.storeError, onStoreError],
    [CHANNELS.memoryEvict, onEvict],
  ];
  for (const [name, listener] of subscriptions) diagnostics_channel.subscribe(name, listener);

  const stores = new Map<string, Pick<MemoryStore, 'size'>>();
  size.addCallback((result) => {
    for (const [name, store] of stores) result.observe(store.size, { 'ratekit.store.name': name });
  });

  return {
    observeMemoryStore(store, name) {
      if (typeof name !== 'string' || name === '') throw new RateKitOptionError('name', 'a non-empty string', name);
      stores.set(name, store);
      return () => {
        if (stores.get(name) === store) stores.delete(name);
      };
    },
    disable() {
      for (const [name, listener] of subscriptions) diagnostics_channel.unsubscribe(name, listener);
      stores.clear();
    },
  };
}
