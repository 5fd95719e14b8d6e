/**
 * @ratekit/cli: the `ratekit` command (`ratekit simulate`), and the
 * simulator behind it for programs: traffic patterns, the replay through
 * @ratekit/core's limiter on a simulated clock, the summaries and the chart.
 *
 * @module
 */
export { CliError } from './errors.js';
export type { CliErrorCode } from './errors.js';
export { boundary, burst, fromCsv, PATTERNS, sawtooth, steady } from './patterns.js';
export type { PatternName, Traffic, TrafficEvent } from './patterns.js';
export { ALGORITHM_ORDER, limitFor, simulate, slidingMax, summarize } from './simulate.js';
export type { AlgorithmRun, LimitSettings, Outcome, Summary } from './simulate.js';
export { chartData, chartSpec, renderSvg } from './chart.js';
export type { ChartOptions, ChartPoint } from './chart.js';
export { DEFAULTS, formatSummary, HELP, main, parseSimulateArgs, reportSvg, runSimulation, summaryJson, trafficFor } from './cli.js';
export type { CliIo, ReadText, SimulateOptions, SimulationReport } from './cli.js';
