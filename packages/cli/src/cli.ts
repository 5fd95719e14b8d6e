/**
 * The `ratekit` command line: `ratekit simulate [options]`. Parsing, the text
 * and JSON summaries, and {@link main}, which the `ratekit` bin runs.
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { AlgorithmName } from '@ratekit/core';
import { renderSvg } from './chart.js';
import { CliError } from './errors.js';
import { boundary, burst, fromCsv, PATTERNS, type PatternName, sawtooth, steady, type Traffic } from './patterns.js';
import { ALGORITHM_ORDER, type AlgorithmRun, type LimitSettings, simulate, type Summary } from './simulate.js';

/** Every option of `ratekit simulate`, parsed and checked. */
export interface SimulateOptions {
  readonly pattern: PatternName;
  readonly algorithms: readonly AlgorithmName[];
  readonly limit: number;
  readonly windowMs: number;
  readonly capacity: number | undefined;
  readonly maxDelayMs: number | undefined;
  readonly rate: number;
  readonly durationMs: number;
  readonly burst: number;
  readonly peak: number;
  readonly periodMs: number;
  readonly gapMs: number;
  readonly csv: string | undefined;
  readonly binMs: number;
  readonly svg: string | undefined;
  readonly json: boolean;
  readonly title: string | undefined;
  readonly help: boolean;
}

type Kind = 'positive' | 'positive-integer' | 'non-negative' | 'string' | 'flag';

interface OptionSpec {
  readonly name: keyof SimulateOptions;
  readonly kind: Kind;
  /** What the value means, for errors and --help: "a positive number of requests per second". */
  readonly unit: string;
  /** The patterns the option applies to; undefined for every pattern. */
  readonly patterns?: readonly PatternName[];
}

const OPTIONS: Record<string, OptionSpec> = {
  '--pattern': { name: 'pattern', kind: 'string', unit: `one of ${PATTERNS.join(', ')}` },
  '--algorithms': { name: 'algorithms', kind: 'string', unit: `a comma-separated list of ${ALGORITHM_ORDER.join(', ')}, or all` },
  '--limit': { name: 'limit', kind: 'positive', unit: 'requests per window' },
  '--window': { name: 'windowMs', kind: 'positive', unit: 'ms' },
  '--capacity': { name: 'capacity', kind: 'positive', unit: 'requests (the burst of token-bucket, gcra and delay)' },
  '--max-delay': { name: 'maxDelayMs', kind: 'non-negative', unit: 'ms' },
  '--rate': { name: 'rate', kind: 'positive', unit: 'requests per second', patterns: ['steady', 'burst'] },
  '--duration': { name: 'durationMs', kind: 'positive', unit: 'ms', patterns: ['steady', 'burst', 'sawtooth'] },
  '--burst': { name: 'burst', kind: 'positive-integer', unit: 'requests', patterns: ['burst'] },
  '--peak': { name: 'peak', kind: 'positive', unit: 'requests per second', patterns: ['sawtooth'] },
  '--period': { name: 'periodMs', kind: 'positive', unit: 'ms', patterns: ['sawtooth'] },
  '--gap': { name: 'gapMs', kind: 'positive', unit: 'ms', patterns: ['boundary'] },
  '--csv': { name: 'csv', kind: 'string', unit: 'a file path', patterns: ['csv'] },
  '--bin': { name: 'binMs', kind: 'positive', unit: 'ms' },
  '--svg': { name: 'svg', kind: 'string', unit: 'a file path, or - for standard output' },
  '--json': { name: 'json', kind: 'flag', unit: '' },
  '--title': { name: 'title', kind: 'string', unit: 'a chart title' },
  '--help': { name: 'help', kind: 'flag', unit: '' },
  '-h': { name: 'help', kind: 'flag', unit: '' },
};

/** The defaults: a burst of 30, then 20/s for 5 s, against 10 per second. */
export const DEFAULTS = {
  pattern: 'burst',
  limit: 10,
  windowMs: 1_000,
  rate: 20,
  durationMs: 5_000,
  burst: 30,
  peak: 40,
  periodMs: 2_000,
  gapMs: 1,
} as const;

/** `ratekit simulate --help`. */
export const HELP = `Usage: ratekit simulate [options]

Replays a traffic pattern through ratekit's algorithms (the real @ratekit/core
limiter on a simulated clock) and prints, per algorithm, how many requests were
admitted and refused, the most admitted in any window of the limit's length, and
the worst Retry-After. --svg draws requests offered vs admitted over time, one
panel per algorithm; the same command always writes the same bytes.

Limit (the same for every algorithm):
  --algorithms LIST  comma-separated, or all             [default: all]
                     ${ALGORITHM_ORDER.join(', ')}
  --limit N          requests per window                  [default: ${DEFAULTS.limit}]
  --window MS        window, or refill period, in ms      [default: ${DEFAULTS.windowMs}]
  --capacity N       burst of token-bucket, gcra, delay   [default: core's: limit; delay: 1]
  --max-delay MS     delay: longest a request is held     [default: the window]

Traffic (one key, cost 1, unless from a CSV):
  --pattern NAME     steady | burst | sawtooth | boundary | csv   [default: ${DEFAULTS.pattern}]
    steady           --rate per second, evenly spaced, for --duration ms
    burst            --burst requests at 0, then --rate per second until --duration
    sawtooth         rate ramps from 0 to --peak per second over each --period ms, for --duration
    boundary         attack on a fixed window: 1 request at 0 opens the window, then
                     --limit requests --gap ms before its end and --limit at its end
    csv              one request per row of --csv FILE: timestamp_ms[,key[,cost]],
                     optionally under a header naming the columns (timestamp, key, cost)
  --rate N           [default: ${DEFAULTS.rate}]      --duration MS   [default: ${DEFAULTS.durationMs}]
  --burst N          [default: ${DEFAULTS.burst}]      --peak N        [default: ${DEFAULTS.peak}]
  --period MS        [default: ${DEFAULTS.periodMs}]    --gap MS        [default: ${DEFAULTS.gapMs}]
  --csv FILE         (implies --pattern csv)

Output:
  --svg FILE         write the chart (SVG; - for standard output)
  --bin MS           chart bin width                     [default: window / 10]
  --title TEXT       chart title                         [default: the pattern]
  --json             print the summary as JSON instead of text
  -h, --help         this help

Example:
  ratekit simulate --pattern boundary --limit 10 --window 1000 --svg boundary.svg

Errors exit with code 2 and a coded message (ERR_RATEKIT_CLI_*) naming the argument.
`;

/**
 * Parses the arguments after `simulate`. Accepts `--name value` and `--name=value`.
 *
 * @throws {CliError} naming the argument, what was expected and what was given
 */
export function parseSimulateArgs(argv: readonly string[]): SimulateOptions {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const spec = OPTIONS[name];
    if (spec === undefined) {
      throw new CliError('ERR_RATEKIT_CLI_UNKNOWN_ARGUMENT', name, `one of ${Object.keys(OPTIONS).join(', ')}`, arg, `Unknown argument ${JSON.stringify(arg)}; see ratekit simulate --help`);
    }
    if (spec.kind === 'flag') {
      if (eq > 0) throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', name, 'a flag without a value', arg.slice(eq + 1));
      given.set(name, '');
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new CliError(
        'ERR_RATEKIT_CLI_MISSING_ARGUMENT',
        name,
        describeKind(spec),
        value,
        `Expected \`${name}\` to be followed by ${describeKind(spec)}, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`,
      );
    }
    given.set(spec === OPTIONS['-h'] ? '--help' : name, value);
  }

  const number = (name: string, fallback: number): number => {
    const raw = given.get(name);
    if (raw === undefined) return fallback;
    return parseNumber(name, raw, OPTIONS[name]!);
  };
  const optional = (name: string): number | undefined => (given.has(name) ? number(name, 0) : undefined);

  const patternRaw = given.get('--pattern') ?? (given.has('--csv') ? 'csv' : DEFAULTS.pattern);
  if (!(PATTERNS as readonly string[]).includes(patternRaw)) {
    throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--pattern', `one of ${PATTERNS.join(', ')}`, patternRaw);
  }
  const pattern = patternRaw as PatternName;
  for (const name of given.keys()) {
    const patterns = OPTIONS[name]!.patterns;
    if (patterns !== undefined && !patterns.includes(pattern)) {
      throw new CliError(
        'ERR_RATEKIT_CLI_INVALID_ARGUMENT',
        name,
        `used with --pattern ${patterns.join(' or ')}`,
        given.get(name),
        `\`${name}\` applies to --pattern ${patterns.join(' or ')}, not to --pattern ${pattern}`,
      );
    }
  }
  if (given.get('--svg') === '-' && given.has('--json')) {
    throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--svg', 'a file path when --json is given (both cannot go to standard output)', '-');
  }
  if (pattern === 'csv' && !given.has('--csv')) {
    throw new CliError('ERR_RATEKIT_CLI_MISSING_ARGUMENT', '--csv', 'a CSV file (timestamp_ms[,key[,cost]] per row)', undefined, 'Expected `--csv FILE` with --pattern csv, got nothing');
  }

  const windowMs = number('--window', DEFAULTS.windowMs);
  const limit = number('--limit', DEFAULTS.limit);
  const gapMs = number('--gap', DEFAULTS.gapMs);
  if (pattern === 'boundary') {
    if (!Number.isInteger(limit)) throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--limit', 'a whole number with --pattern boundary (it sends --limit requests)', given.get('--limit'));
    if (gapMs > windowMs) throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--gap', `at most --window (${windowMs} ms)`, given.get('--gap'));
  }
  return {
    pattern,
    algorithms: parseAlgorithms(given.get('--algorithms')),
    limit,
    windowMs,
    capacity: optional('--capacity'),
    maxDelayMs: optional('--max-delay'),
    rate: number('--rate', DEFAULTS.rate),
    durationMs: number('--duration', DEFAULTS.durationMs),
    burst: number('--burst', DEFAULTS.burst),
    peak: number('--peak', DEFAULTS.peak),
    periodMs: number('--period', DEFAULTS.periodMs),
    gapMs,
    csv: given.get('--csv'),
    binMs: number('--bin', windowMs / 10),
    svg: given.get('--svg'),
    json: given.has('--json'),
    title: given.get('--title'),
    help: given.has('--help'),
  };
}

function describeKind(spec: OptionSpec): string {
  switch (spec.kind) {
    case 'positive':
      return `a positive number (${spec.unit})`;
    case 'positive-integer':
      return `a positive whole number (${spec.unit})`;
    case 'non-negative':
      return `a number >= 0 (${spec.unit})`;
    default:
      return spec.unit;
  }
}

function parseNumber(name: string, raw: string, spec: OptionSpec): number {
  const value = /^\s*$/.test(raw) ? Number.NaN : Number(raw);
  const ok = Number.isFinite(value) && (spec.kind === 'non-negative' ? value >= 0 : value > 0) && (spec.kind !== 'positive-integer' || Number.isInteger(value));
  if (!ok) throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', name, describeKind(spec), raw);
  return value;
}

function parseAlgorithms(raw: string | undefined): AlgorithmName[] {
  if (raw === undefined || raw === 'all') return [...ALGORITHM_ORDER];
  const names = raw.split(',').map((name) => name.trim());
  const expected = `a comma-separated list of ${ALGORITHM_ORDER.join(', ')}, or all`;
  for (const name of names) {
    if (!(ALGORITHM_ORDER as readonly string[]).includes(name))
      throw new CliError(
        'ERR_RATEKIT_CLI_INVALID_ARGUMENT',
        '--algorithms',
        expected,
        raw,
        `Expected \`--algorithms\` to be ${expected}, got ${JSON.stringify(raw)} (unknown: ${JSON.stringify(name)})`,
      );
  }
  if (new Set(names).size !== names.length) throw new CliError('ERR_RATEKIT_CLI_INVALID_ARGUMENT', '--algorithms', `${expected}, each at most once`, raw);
  return names as AlgorithmName[];
}

/** Reads a file as UTF-8 text (the CSV). Injected in tests. */
export type ReadText = (path: string) => Promise<string>;

/**
 * The traffic the options describe.
 *
 * @throws {CliError} `ERR_RATEKIT_CLI_CSV` when the CSV cannot be read or has a bad row
 */
export async function trafficFor(options: SimulateOptions, read: ReadText = (path) => readFile(path, 'utf8')): Promise<Traffic> {
  const requests = expectedRequests(options);
  if (requests > MAX_REQUESTS) {
    throw new CliError(
      'ERR_RATEKIT_CLI_INVALID_ARGUMENT',
      '--pattern',
      `at most ${MAX_REQUESTS} requests`,
      options.pattern,
      `Expected the ${options.pattern} pattern to make at most ${MAX_REQUESTS} requests, got about ${Math.round(requests)}: lower --rate, --peak, --burst or --duration`,
    );
  }
  switch (options.pattern) {
    case 'steady':
      return steady({ rate: options.rate, durationMs: options.durationMs });
    case 'burst':
      return burst({ burst: options.burst, rate: options.rate, durationMs: options.durationMs });
    case 'sawtooth':
      return sawtooth({ peak: options.peak, periodMs: options.periodMs, durationMs: options.durationMs });
    case 'boundary':
      return boundary({ limit: options.limit, windowMs: options.windowMs, gapMs: options.gapMs });
    case 'csv': {
      const file = options.csv!;
      let text: string;
      try {
        text = await read(file);
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message);
        throw new CliError('ERR_RATEKIT_CLI_CSV', '--csv', 'a readable CSV file', file, `Cannot read \`--csv\` file ${JSON.stringify(file)}: ${reason}`);
      }
      return fromCsv(text, file, options.windowMs);
    }
  }
}

/** The most requests a built-in pattern may make: a simulation, not a load test. */
export const MAX_REQUESTS = 1_000_000;

/** About how many requests a built-in pattern makes (0 for csv, whose size is the file's). */
function expectedRequests(options: SimulateOptions): number {
  switch (options.pattern) {
    case 'steady':
      return (options.rate * options.durationMs) / 1000;
    case 'burst':
      return options.burst + (options.rate * options.durationMs) / 1000;
    case 'sawtooth':
      return Math.round((options.peak * options.periodMs) / 2000) * Math.ceil(options.durationMs / options.periodMs);
    case 'boundary':
      return 2 * options.limit + 1;
    default:
      return 0;
  }
}

/** The result of `ratekit simulate`: the traffic, each algorithm's run, and the limit settings used. */
export interface SimulationReport {
  readonly options: SimulateOptions;
  readonly traffic: Traffic;
  readonly settings: LimitSettings;
  readonly runs: readonly AlgorithmRun[];
}

/** Runs the simulation the options describe. */
export async function runSimulation(options: SimulateOptions, read?: ReadText): Promise<SimulationReport> {
  const traffic = await trafficFor(options, read);
  const settings: LimitSettings = { limit: options.limit, windowMs: options.windowMs, burst: options.capacity, maxDelayMs: options.maxDelayMs };
  return { options, traffic, settings, runs: simulate(traffic, options.algorithms, settings) };
}

/** The chart of a report, as SVG text (deterministic). */
export function reportSvg(report: SimulationReport): Promise<string> {
  const { options, traffic, runs } = report;
  return renderSvg(traffic, runs, {
    binMs: options.binMs,
    title: options.title ?? traffic.description,
    subtitle: `${limitText(report.settings)}. Requests per ${options.binMs} ms: offered (grey) and admitted (blue, when they pass)`,
  });
}

function limitText(settings: LimitSettings): string {
  const parts = [`limit ${settings.limit} per ${settings.windowMs} ms`];
  if (settings.burst !== undefined) parts.push(`capacity ${settings.burst}`);
  if (settings.maxDelayMs !== undefined) parts.push(`max delay ${settings.maxDelayMs} ms`);
  return parts.join(', ');
}

/** The text summary: a header, then one row per algorithm. */
export function formatSummary(report: SimulationReport): string {
  const { traffic, settings, runs } = report;
  const keys = new Set(traffic.events.map((event) => event.key)).size;
  const W = settings.windowMs;
  const header = ['algorithm', 'offered', 'admitted', 'refused', `max in ${W} ms`, 'worst Retry-After', 'worst retryAfterMs', 'worst delay'];
  const rows = runs.map(({ summary: s }) => [
    s.algorithm,
    String(s.offered),
    String(s.admitted),
    String(s.refused),
    String(round(s.maxAdmittedInWindow)),
    s.worstRetryAfterSeconds === null ? '-' : `${s.worstRetryAfterSeconds} s`,
    s.worstRetryAfterMs === null ? '-' : `${round(s.worstRetryAfterMs)} ms`,
    `${round(s.worstDelayMs)} ms`,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    traffic.description,
    `${limitText(settings)}; ${traffic.events.length} requests from ${keys} key${keys === 1 ? '' : 's'}`,
    '',
    line(header),
    ...rows.map(line),
    '',
    `max in ${W} ms: the most admitted to one key in any [t, t + ${W} ms), counted when they pass.`,
    'Retry-After: whole seconds as the header is sent (rounded up, at least 1).',
    '',
  ].join('\n');
}

/** The JSON summary (`--json`). `Infinity` (a cost that can never pass) is written as the string "Infinity". */
export function summaryJson(report: SimulationReport, svg?: string): Record<string, unknown> {
  const { options, traffic, settings, runs } = report;
  return {
    pattern: options.pattern,
    description: traffic.description,
    requests: traffic.events.length,
    keys: new Set(traffic.events.map((event) => event.key)).size,
    startMs: traffic.startMs,
    durationMs: traffic.durationMs,
    limit: settings.limit,
    windowMs: settings.windowMs,
    capacity: settings.burst ?? null,
    maxDelayMs: settings.maxDelayMs ?? null,
    binMs: options.binMs,
    svg: svg ?? null,
    algorithms: runs.map((run): Summary & { limitOptions: unknown } => ({ ...run.summary, limitOptions: run.limit })),
  };
}

function round(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 1000) / 1000 : value;
}

/** Where the command writes; the bin passes the process's streams and the file system. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readText?: ReadText;
  writeText?: (path: string, text: string) => Promise<void>;
}

const USAGE = `Usage: ratekit simulate [options]   (ratekit simulate --help for the options)\n`;

/**
 * Runs `ratekit <argv>` and resolves to the exit code: 0 on success, 2 on a
 * usage error (printed to stderr with its code), 1 on any other failure.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      if (command === undefined) {
        io.stderr(USAGE);
        return 2;
      }
      io.stdout(HELP);
      return 0;
    }
    if (command !== 'simulate') throw new CliError('ERR_RATEKIT_CLI_UNKNOWN_ARGUMENT', 'command', 'simulate', command, `Unknown command ${JSON.stringify(command)}; expected \`simulate\``);
    const options = parseSimulateArgs(rest);
    if (options.help) {
      io.stdout(HELP);
      return 0;
    }
    const report = await runSimulation(options, io.readText);
    let svgPath: string | undefined;
    if (options.svg !== undefined) {
      const svg = await reportSvg(report);
      if (options.svg === '-') io.stdout(svg);
      else {
        await (io.writeText ?? ((path, text) => writeFile(path, text)))(options.svg, svg);
        svgPath = options.svg;
      }
    }
    if (options.json) io.stdout(`${JSON.stringify(summaryJson(report, svgPath), (_key, value: unknown) => (value === Infinity ? 'Infinity' : value), 2)}\n`);
    else if (options.svg !== '-') io.stdout(formatSummary(report));
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr(`ratekit: ${error.code}: ${error.message}\n`);
      return 2;
    }
    io.stderr(`ratekit: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
