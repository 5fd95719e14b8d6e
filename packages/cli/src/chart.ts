/**
 * The chart: requests offered vs admitted over time, one panel per
 * algorithm, as a Vega-Lite spec compiled by vega-lite and rendered to SVG by
 * vega's headless renderer (`View#toSVG`, no canvas needed).
 *
 * Deterministic: the spec holds only the simulation's numbers, the renderer
 * draws no random ids or timestamps, and text widths are estimated from
 * character counts (vega's `textMetrics` without canvas), so the same
 * command gives the same bytes on every machine, with or without the
 * optional `canvas` package installed.
 *
 * @module
 */
import { CliError } from './errors.js';
import type { AlgorithmRun } from './simulate.js';
import type { Traffic } from './patterns.js';

/** The most bins a chart draws (per algorithm and series). */
export const MAX_BINS = 2_000;

/** One point of the chart's data: requests in the bin starting at `t` (ms from the traffic's start). */
export interface ChartPoint {
  readonly algorithm: string;
  readonly series: 'offered' | 'admitted';
  readonly t: number;
  readonly requests: number;
}

/** What the chart needs besides the runs. */
export interface ChartOptions {
  /** Bin width, ms: the chart counts requests per bin. */
  readonly binMs: number;
  /** The chart's title. */
  readonly title: string;
  /** A second title line, e.g. the limit. */
  readonly subtitle?: string;
}

/**
 * The chart's data: for each algorithm, requests offered per bin (by arrival
 * time) and admitted per bin (by the time they pass, so `delay`'s held
 * requests show when they are let through). The chart spans the traffic's
 * duration, extended to the last pass, in whole bins; a last point at the end
 * repeats the last bin so the step lines reach the right edge.
 */
export function chartData(traffic: Traffic, runs: readonly AlgorithmRun[], binMs: number): { points: ChartPoint[]; spanMs: number } {
  let lastMs = traffic.durationMs;
  for (const run of runs) for (const outcome of run.outcomes) if (outcome.allowed) lastMs = Math.max(lastMs, outcome.passMs - traffic.startMs + 1);
  const bins = Math.max(1, Math.ceil(lastMs / binMs));
  if (bins > MAX_BINS) {
    throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--bin', `at least ${Math.ceil(lastMs / MAX_BINS)} ms here (at most ${MAX_BINS} bins over ${lastMs} ms)`, String(binMs));
  }
  const spanMs = bins * binMs;
  const points: ChartPoint[] = [];
  for (const run of runs) {
    const offered = new Array<number>(bins).fill(0);
    const admitted = new Array<number>(bins).fill(0);
    for (const outcome of run.outcomes) {
      offered[Math.min(bins - 1, Math.floor((outcome.event.t - traffic.startMs) / binMs))]!++;
      if (outcome.allowed) admitted[Math.min(bins - 1, Math.floor((outcome.passMs - traffic.startMs) / binMs))]!++;
    }
    for (const [series, counts] of [
      ['offered', offered],
      ['admitted', admitted],
    ] as const) {
      counts.forEach((requests, i) => points.push({ algorithm: run.algorithm, series, t: i * binMs, requests }));
      points.push({ algorithm: run.algorithm, series, t: spanMs, requests: counts[bins - 1]! });
    }
  }
  return { points, spanMs };
}

/** The Vega-Lite spec of the chart (a plain JSON object). */
export function chartSpec(traffic: Traffic, runs: readonly AlgorithmRun[], options: ChartOptions): Record<string, unknown> {
  const { points, spanMs } = chartData(traffic, runs, options.binMs);
  const encoding = {
    x: { field: 't', type: 'quantitative', title: 'time (ms)', scale: { domain: [0, spanMs], nice: false } },
    y: { field: 'requests', type: 'quantitative', title: null, axis: { tickMinStep: 1 } },
    color: {
      field: 'series',
      type: 'nominal',
      title: null,
      scale: { domain: ['offered', 'admitted'], range: ['#9aa0a6', '#1a73e8'] },
      legend: { orient: 'top', direction: 'horizontal', symbolType: 'square' },
    },
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: options.subtitle === undefined ? options.title : { text: options.title, subtitle: options.subtitle },
    data: { values: points },
    facet: {
      row: {
        field: 'algorithm',
        type: 'nominal',
        sort: runs.map((run) => run.algorithm),
        title: null,
        header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelFontWeight: 'bold', labelFontSize: 12 },
      },
    },
    spacing: 14,
    spec: {
      width: 640,
      height: 80,
      layer: [
        {
          transform: [{ filter: "datum.series === 'offered'" }],
          mark: { type: 'area', interpolate: 'step-after', opacity: 0.45 },
          encoding,
        },
        {
          transform: [{ filter: "datum.series === 'admitted'" }],
          mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.5 },
          encoding,
        },
      ],
    },
    config: { background: 'white', font: 'sans-serif' },
  };
}

/**
 * Renders the chart to SVG text: the spec compiled by vega-lite, then drawn
 * by a headless vega View. The same runs and options give the same bytes.
 */
export async function renderSvg(traffic: Traffic, runs: readonly AlgorithmRun[], options: ChartOptions): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  // Estimated text widths: the same on every machine, whether or not `canvas` is installed.
  // (`textMetrics` is exported by vega-scenegraph, through vega, but not in vega's typings.)
  (vega as unknown as { textMetrics?: { canvas(use: boolean): void } }).textMetrics?.canvas(false);
  const compiled = vegaLite.compile(chartSpec(traffic, runs, options) as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}
