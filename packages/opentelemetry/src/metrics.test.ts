import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { createLimiter, memoryStore, type RateLimitStore } from '@ratekit/core';
import { instrumentRateKit, type RateKitMetrics } from './index.js';

/** The SDK's own reader, collected on demand (no exporter, no timer). */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** Each instrument's data points as `[attributes, value]`. */
async function points(reader: MetricReader): Promise<Record<string, Array<[Record<string, unknown>, unknown]>>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const out: Record<string, Array<[Record<string, unknown>, unknown]>> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      out[metric.descriptor.name] = metric.dataPoints.map((p) => [p.attributes as Record<string, unknown>, p.value]);
    }
  }
  return out;
}

const broken: RateLimitStore = { name: 'broken', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('down')), resetKey: () => undefined };

let reader: CollectingReader;
let provider: MeterProvider;
let instrumentation: RateKitMetrics;
beforeEach(() => {
  reader = new CollectingReader();
  provider = new MeterProvider({ readers: [reader] });
  instrumentation = instrumentRateKit({ meterProvider: provider });
});
afterEach(async () => {
  instrumentation.disable();
  await provider.shutdown();
});

describe('instrumentRateKit: ratekit events as OpenTelemetry metrics (SDK reader, no mock)', () => {
  it('counts decisions by policy and outcome, and records each store call’s duration', async () => {
    const limiter = createLimiter({ limits: { limit: 2, windowMs: 60_000, name: 'minute' }, prefix: 'api', now: () => 0 });
    for (let i = 0; i < 5; i++) await limiter.consume('alice');
    const got = await points(reader);
    const base = { 'ratekit.prefix': 'api', 'ratekit.policy': 'minute', 'ratekit.mode': 'consume', 'ratekit.fallback': false, 'ratekit.source': 'store' };
    expect(got['ratekit.decisions']).toEqual(
      expect.arrayContaining([
        [{ ...base, 'ratekit.outcome': 'allowed' }, 2],
        [{ ...base, 'ratekit.outcome': 'refused' }, 3],
      ]),
    );
    const [[attributes, histogram]] = got['ratekit.store.duration'] as [[Record<string, unknown>, { count: number; min: number }]];
    expect(attributes).toEqual({ 'ratekit.store': 'memory', 'ratekit.mode': 'consume', 'ratekit.fallback': false });
    expect(histogram.count).toBe(5);
    expect(histogram.min).toBeGreaterThanOrEqual(0);
  });

  it("counts refusals answered from the refusal cache apart from the store's, and times only store calls", async () => {
    const inner = memoryStore({ pruneIntervalMs: 0 });
    const remote: RateLimitStore = { name: 'remote', shared: true, clock: 'caller', evaluate: async (r) => inner.evaluate(r), resetKey: async (k, n) => inner.resetKey(k, n) };
    const limiter = createLimiter({ limits: { limit: 1, windowMs: 60_000, name: 'minute' }, store: remote, prefix: 'api', now: () => 0 });
    for (let i = 0; i < 5; i++) await limiter.consume('alice');
    const got = await points(reader);
    const base = { 'ratekit.prefix': 'api', 'ratekit.policy': 'minute', 'ratekit.mode': 'consume', 'ratekit.fallback': false };
    expect(got['ratekit.decisions']).toEqual(
      expect.arrayContaining([
        [{ ...base, 'ratekit.outcome': 'allowed', 'ratekit.source': 'store' }, 1],
        [{ ...base, 'ratekit.outcome': 'refused', 'ratekit.source': 'store' }, 1],
        [{ ...base, 'ratekit.outcome': 'refused', 'ratekit.source': 'cache' }, 3],
      ]),
    );
    const [[, histogram]] = got['ratekit.store.duration'] as [[Record<string, unknown>, { count: number }]];
    expect(histogram.count).toBe(2);
  });

  it('counts store errors and the fallback decisions they led to', async () => {
    const limiter = createLimiter({ limits: { limit: 2, windowMs: 60_000 }, store: broken, onStoreError: 'deny', onError: () => {}, now: () => 0 });
    await limiter.consume('k');
    await limiter.consume('k');
    const got = await points(reader);
    expect(got['ratekit.store.errors']).toEqual([[{ 'ratekit.store': 'broken', 'ratekit.on_store_error': 'deny' }, 2]]);
    expect(got['ratekit.store.fallbacks']).toEqual([[{ 'ratekit.store': 'broken', 'ratekit.on_store_error': 'deny' }, 2]]);
    expect(got['ratekit.decisions']).toEqual([[expect.objectContaining({ 'ratekit.outcome': 'refused', 'ratekit.fallback': true }), 2]]);
  });

  it('counts memory evictions and reports an observed store’s size', async () => {
    const store = memoryStore({ maxKeys: 2, pruneIntervalMs: 0 });
    instrumentation.observeMemoryStore(store, 'api');
    const limiter = createLimiter({ limits: { limit: 4, windowMs: 60_000 }, store, now: () => 0 });
    await limiter.consume('a'); // 3 of 4 left: dropped when evicted
    await limiter.consume('b', { cost: 4 }); // none left: kept aside when evicted
    await limiter.consume('c');
    await limiter.consume('d');
    const got = await points(reader);
    expect(got['ratekit.memory.evictions']).toEqual(
      expect.arrayContaining([
        [{ 'ratekit.memory.kept_aside': false }, 1],
        [{ 'ratekit.memory.kept_aside': true }, 1],
      ]),
    );
    expect(got['ratekit.memory.size']).toEqual([[{ 'ratekit.store.name': 'api' }, 3]]);
    store.dispose();
  });

  it('records nothing after disable()', async () => {
    instrumentation.disable();
    await createLimiter({ limits: { limit: 1, windowMs: 1_000 }, now: () => 0 }).consume('k');
    expect(await points(reader)).toEqual({});
  });
});
