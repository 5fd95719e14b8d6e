/**
 * Traffic patterns: lists of requests at exact times (ms on the simulated
 * clock), each with a key and a cost. Every generator is a pure function of
 * its parameters, so a pattern is the same on every run.
 *
 * @module
 */
import { CliError } from './errors.js';

/** One offered request. */
export interface TrafficEvent {
  /** When it arrives, ms on the simulated clock. */
  readonly t: number;
  /** The client key. */
  readonly key: string;
  /** The cost asked for (1 for the built-in patterns). */
  readonly cost: number;
}

/** A pattern's requests, the time span to draw and a one-line description. */
export interface Traffic {
  readonly events: readonly TrafficEvent[];
  /** The chart's time origin, ms: 0 for the built-in patterns, the first timestamp for a CSV. */
  readonly startMs: number;
  /** How long the chart spans from `startMs`, ms. */
  readonly durationMs: number;
  readonly description: string;
}

/** The built-in pattern names, and `csv`. */
export const PATTERNS = ['steady', 'burst', 'sawtooth', 'boundary', 'csv'] as const;
export type PatternName = (typeof PATTERNS)[number];

const KEY = 'client';

function at(t: number): TrafficEvent {
  return { t, key: KEY, cost: 1 };
}

/** Times `round(i × 1000 / rate)` for i = from, from + 1, … while below `durationMs`. */
function evenly(rate: number, durationMs: number, from: number): TrafficEvent[] {
  const events: TrafficEvent[] = [];
  for (let i = from; ; i++) {
    const t = Math.round((i * 1000) / rate);
    if (t >= durationMs) return events;
    events.push(at(t));
  }
}

/**
 * Steady: `rate` requests per second, evenly spaced, the first at 0:
 * times `round(i × 1000 / rate)` below `durationMs`.
 */
export function steady(options: { rate: number; durationMs: number }): Traffic {
  const { rate, durationMs } = options;
  return { events: evenly(rate, durationMs, 0), startMs: 0, durationMs, description: `steady: ${rate}/s for ${durationMs} ms` };
}

/**
 * Burst then steady: `burst` requests at once at 0, then `rate` per second
 * from `1000 / rate` on (times `round(i × 1000 / rate)`, i ≥ 1, below `durationMs`).
 */
export function burst(options: { burst: number; rate: number; durationMs: number }): Traffic {
  const { burst: size, rate, durationMs } = options;
  const events = Array.from({ length: size }, () => at(0));
  events.push(...evenly(rate, durationMs, 1));
  return { events, startMs: 0, durationMs, description: `burst: ${size} at 0 ms, then ${rate}/s until ${durationMs} ms` };
}

/**
 * Sawtooth: in each period the rate climbs linearly from 0 to `peak` requests
 * per second, then drops to 0 as the next period starts. Each period holds
 * `round(peak × periodMs / 2000)` requests (the area under the ramp); the k-th
 * (k = 1, 2, …) arrives where the ramp's integral reaches k − ½, at
 * `floor(sqrt(2000 × periodMs × (k − ½) / peak))` ms into the period.
 */
export function sawtooth(options: { peak: number; periodMs: number; durationMs: number }): Traffic {
  const { peak, periodMs, durationMs } = options;
  const perPeriod = Math.round((peak * periodMs) / 2000);
  const events: TrafficEvent[] = [];
  for (let start = 0; start < durationMs; start += periodMs) {
    for (let k = 1; k <= perPeriod; k++) {
      const t = start + Math.floor(Math.sqrt((2000 * periodMs * (k - 0.5)) / peak));
      if (t < durationMs) events.push(at(t));
    }
  }
  return { events, startMs: 0, durationMs, description: `sawtooth: 0 to ${peak}/s every ${periodMs} ms for ${durationMs} ms` };
}

/**
 * A boundary attack on a fixed window whose window starts at a key's first
 * hit (ratekit's, express-rate-limit's): one request at 0 opens the window
 * `[0, windowMs)`, then `limit` requests at `windowMs − gapMs` (just before
 * it ends) and `limit` at `windowMs` (the first instant of the next window).
 * Drawn over `2 × windowMs`.
 */
export function boundary(options: { limit: number; windowMs: number; gapMs: number }): Traffic {
  const { limit, windowMs, gapMs } = options;
  const events = [at(0), ...Array.from({ length: limit }, () => at(windowMs - gapMs)), ...Array.from({ length: limit }, () => at(windowMs))];
  return {
    events,
    startMs: 0,
    durationMs: 2 * windowMs,
    description: `boundary: 1 at 0 ms, ${limit} at ${windowMs - gapMs} ms, ${limit} at ${windowMs} ms`,
  };
}

const TIME_COLUMNS = ['timestamp', 'time', 't', 'ms'];

/**
 * Traffic from CSV text: one request per row, `timestamp[,key[,cost]]`, the
 * timestamp in ms (any origin, e.g. Unix epoch ms), key default `client`,
 * cost default 1. A first row whose first cell is not a number is a header:
 * its columns are found by name (`timestamp` / `time` / `t` / `ms`, `key`,
 * `cost`), in any order. Blank lines and lines starting with `#` are skipped.
 * Rows are sorted by time (stably). The chart starts at the first timestamp
 * and ends one `tailMs` after the last.
 *
 * @param file - the file's name, for error messages
 * @throws {CliError} `ERR_RATEKIT_CLI_CSV` naming the file, line and column of a bad row
 */
export function fromCsv(text: string, file: string, tailMs: number): Traffic {
  const lines = text.split(/\r?\n/);
  let columns = { time: 0, key: 1, cost: 2 };
  const events: TrafficEvent[] = [];
  let first = true;
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const cells = line.split(',').map((cell) => cell.trim());
    const where = `${file}:${index + 1}`;
    if (first) {
      first = false;
      if (!isNumeric(cells[0]!)) {
        const names = cells.map((cell) => cell.toLowerCase());
        const time = names.findIndex((name) => TIME_COLUMNS.includes(name));
        if (time < 0) throw new CliError('ERR_RATEKIT_CLI_CSV', where, `a header with a time column (${TIME_COLUMNS.join(', ')})`, line);
        columns = { time, key: names.indexOf('key'), cost: names.indexOf('cost') };
        return;
      }
    }
    const timeCell = cells[columns.time];
    if (timeCell === undefined || !isNumeric(timeCell)) throw new CliError('ERR_RATEKIT_CLI_CSV', `${where} timestamp`, 'a finite number of ms', timeCell ?? '');
    const keyCell = columns.key >= 0 ? cells[columns.key] : undefined;
    const costCell = columns.cost >= 0 ? cells[columns.cost] : undefined;
    let cost = 1;
    if (costCell !== undefined && costCell !== '') {
      cost = Number(costCell);
      if (!isNumeric(costCell) || cost < 0) throw new CliError('ERR_RATEKIT_CLI_CSV', `${where} cost`, 'a finite number >= 0', costCell);
    }
    events.push({ t: Number(timeCell), key: keyCell === undefined || keyCell === '' ? KEY : keyCell, cost });
  });
  if (events.length === 0) throw new CliError('ERR_RATEKIT_CLI_CSV', file, 'at least one row `timestamp[,key[,cost]]`', text.slice(0, 40));
  const sorted = events
    .map((event, i) => [event, i] as const)
    .sort((a, b) => a[0].t - b[0].t || a[1] - b[1])
    .map(([event]) => event);
  const startMs = sorted[0]!.t;
  const durationMs = sorted[sorted.length - 1]!.t - startMs + tailMs;
  return { events: sorted, startMs, durationMs, description: `csv: ${sorted.length} requests from ${file}` };
}

function isNumeric(cell: string): boolean {
  return cell !== '' && Number.isFinite(Number(cell));
}
