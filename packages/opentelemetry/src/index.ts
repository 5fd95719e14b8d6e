/**
 * @ratekit/opentelemetry: OpenTelemetry metrics from ratekit's
 * `node:diagnostics_channel` events.
 *
 * @module
 */
export { instrumentRateKit } from './metrics.js';
export type { RateKitMetrics, RateKitMetricsOptions } from './metrics.js';
