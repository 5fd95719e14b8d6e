import { HELP, main, parseSimulateArgs } from './cli.js';
import { CliError } from './errors.js';

/** Runs `ratekit <args>` in memory: files written and read go through maps. */
async function run(args: string[], files: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const written: Record<string, string> = {};
  const code = await main(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    readText: async (path) => {
      if (!(path in files)) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
      return files[path]!;
    },
    writeText: async (path, text) => {
      written[path] = text;
    },
  });
  return { code, stdout, stderr, written };
}

function parseError(args: string[]): CliError {
  try {
    parseSimulateArgs(args);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected an error');
}

describe('arguments', () => {
  test('defaults: a burst of 30 then 20/s for 5 s, all six algorithms, 10 per 1000 ms, bins of window / 10', () => {
    expect(parseSimulateArgs([])).toMatchObject({
      pattern: 'burst',
      algorithms: ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra', 'delay'],
      limit: 10,
      windowMs: 1000,
      burst: 30,
      rate: 20,
      durationMs: 5000,
      binMs: 100,
      capacity: undefined,
      maxDelayMs: undefined,
      json: false,
      svg: undefined,
    });
  });

  test('--name value and --name=value; --csv implies --pattern csv', () => {
    expect(parseSimulateArgs(['--pattern=steady', '--rate', '7.5', '--algorithms=gcra,delay'])).toMatchObject({ pattern: 'steady', rate: 7.5, algorithms: ['gcra', 'delay'] });
    expect(parseSimulateArgs(['--csv', 'x.csv'])).toMatchObject({ pattern: 'csv', csv: 'x.csv' });
  });

  test('an unknown pattern names the argument, what is expected and what was given', () => {
    const error = parseError(['--pattern', 'spiky']);
    expect(error).toMatchObject({ code: 'ERR_RATEKIT_CLI_INVALID_ARGUMENT', argument: '--pattern', expected: 'one of steady, burst, sawtooth, boundary, csv', received: 'spiky' });
    expect(error.message).toBe('[ratekit] Expected `--pattern` to be one of steady, burst, sawtooth, boundary, csv, got "spiky"');
  });

  test.each([
    ['--rate', 'fast', 'a positive number (requests per second)'],
    ['--rate', '0', 'a positive number (requests per second)'],
    ['--limit', '-1', 'a positive number (requests per window)'],
    ['--window', 'Infinity', 'a positive number (ms)'],
    ['--burst', '2.5', 'a positive whole number (requests)'],
    ['--max-delay', '-5', 'a number >= 0 (ms)'],
    ['--bin', '', 'a positive number (ms)'],
  ])('a bad number: %s %j', (name, value, expected) => {
    expect(parseError([name, value])).toMatchObject({ code: 'ERR_RATEKIT_CLI_INVALID_ARGUMENT', argument: name, expected, received: value });
  });

  test('an unknown algorithm names the culprit', () => {
    const error = parseError(['--algorithms', 'gcra,leaky']);
    expect(error).toMatchObject({ code: 'ERR_RATEKIT_CLI_INVALID_ARGUMENT', argument: '--algorithms', received: 'gcra,leaky' });
    expect(error.message).toContain('(unknown: "leaky")');
  });

  test('an option without its value, an unknown option, an option of another pattern', () => {
    expect(parseError(['--rate'])).toMatchObject({ code: 'ERR_RATEKIT_CLI_MISSING_ARGUMENT', argument: '--rate', received: undefined });
    expect(parseError(['--rate', '--json'])).toMatchObject({ code: 'ERR_RATEKIT_CLI_MISSING_ARGUMENT', argument: '--rate', received: '--json' });
    expect(parseError(['--speed', '3'])).toMatchObject({ code: 'ERR_RATEKIT_CLI_UNKNOWN_ARGUMENT', argument: '--speed' });
    const other = parseError(['--pattern', 'steady', '--peak', '9']);
    expect(other).toMatchObject({ code: 'ERR_RATEKIT_CLI_INVALID_ARGUMENT', argument: '--peak' });
    expect(other.message).toBe('[ratekit] `--peak` applies to --pattern sawtooth, not to --pattern steady');
  });

  test('--svg - and --json cannot both go to standard output', () => {
    expect(parseError(['--svg', '-', '--json'])).toMatchObject({ code: 'ERR_RATEKIT_CLI_INVALID_ARGUMENT', argument: '--svg', received: '-' });
  });

  test('--pattern csv needs --csv; boundary needs a whole --limit and a --gap within the window', () => {
    expect(parseError(['--pattern', 'csv'])).toMatchObject({ code: 'ERR_RATEKIT_CLI_MISSING_ARGUMENT', argument: '--csv' });
    expect(parseError(['--pattern', 'boundary', '--limit', '2.5'])).toMatchObject({ argument: '--limit', received: '2.5' });
    expect(parseError(['--pattern', 'boundary', '--gap', '2000'])).toMatchObject({ argument: '--gap', expected: 'at most --window (1000 ms)' });
  });
});

describe('the command', () => {
  test('a usage error goes to stderr with its code, exit code 2, nothing on stdout', async () => {
    const result = await run(['simulate', '--rate', 'fast']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ratekit: ERR_RATEKIT_CLI_INVALID_ARGUMENT: [ratekit] Expected `--rate` to be a positive number (requests per second), got "fast"\n',
      written: {},
    });
    expect((await run(['simulat'])).stderr).toBe('ratekit: ERR_RATEKIT_CLI_UNKNOWN_ARGUMENT: [ratekit] Unknown command "simulat"; expected `simulate`\n');
  });

  test('a pattern of more than a million requests, or a chart of more than 2000 bins, is refused', async () => {
    const big = await run(['simulate', '--pattern', 'steady', '--rate', '1000000', '--duration', '60000']);
    expect(big.code).toBe(2);
    expect(big.stderr).toBe(
      'ratekit: ERR_RATEKIT_CLI_INVALID_ARGUMENT: [ratekit] Expected the steady pattern to make at most 1000000 requests, got about 60000000: lower --rate, --peak, --burst or --duration\n',
    );
    const bins = await run(['simulate', '--pattern', 'steady', '--algorithms', 'fixed-window', '--bin', '1', '--svg', 'x.svg']);
    expect(bins.code).toBe(2);
    expect(bins.stderr).toBe('ratekit: ERR_RATEKIT_CLI_INVALID_ARGUMENT: [ratekit] Expected `--bin` to be at least 3 ms here (at most 2000 bins over 5000 ms), got "1"\n');
  });

  test('a missing CSV file is a coded error naming it', async () => {
    const result = await run(['simulate', '--csv', 'nope.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('ratekit: ERR_RATEKIT_CLI_CSV: [ratekit] Cannot read `--csv` file "nope.csv": no such file\n');
  });

  test('--help prints the help and exits 0; no command prints the usage and exits 2', async () => {
    expect(await run(['simulate', '--help'])).toMatchObject({ code: 0, stdout: HELP });
    expect(await run(['--help'])).toMatchObject({ code: 0, stdout: HELP });
    const bare = await run([]);
    expect(bare).toMatchObject({ code: 2, stdout: '' });
    expect(bare.stderr).toContain('Usage: ratekit simulate');
    for (const name of [
      '--pattern',
      '--algorithms',
      '--limit',
      '--window',
      '--capacity',
      '--max-delay',
      '--rate',
      '--duration',
      '--burst',
      '--peak',
      '--period',
      '--gap',
      '--csv',
      '--svg',
      '--bin',
      '--title',
      '--json',
    ]) {
      expect(HELP).toContain(name);
    }
  });

  test('the text summary: one row per algorithm with admitted, refused, sliding max and worst Retry-After', async () => {
    const result = await run(['simulate', '--pattern', 'boundary', '--limit', '3', '--algorithms', 'fixed-window,sliding-log']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'boundary: 1 at 0 ms, 3 at 999 ms, 3 at 1000 ms',
        'limit 3 per 1000 ms; 7 requests from 1 key',
        '',
        'algorithm     offered  admitted  refused  max in 1000 ms  worst Retry-After  worst retryAfterMs  worst delay',
        'fixed-window        7         6        1               5                1 s                1 ms         0 ms',
        'sliding-log         7         4        3               3                1 s              999 ms         0 ms',
        '',
        'max in 1000 ms: the most admitted to one key in any [t, t + 1000 ms), counted when they pass.',
        'Retry-After: whole seconds as the header is sent (rounded up, at least 1).',
        '',
      ].join('\n'),
    );
  });

  test('--json: the traffic, the limit and one summary per algorithm, for tools', async () => {
    const result = await run(['simulate', '--pattern', 'boundary', '--limit', '3', '--algorithms', 'fixed-window', '--json', '--svg', 'out.svg']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      pattern: 'boundary',
      description: 'boundary: 1 at 0 ms, 3 at 999 ms, 3 at 1000 ms',
      requests: 7,
      keys: 1,
      startMs: 0,
      durationMs: 2000,
      limit: 3,
      windowMs: 1000,
      capacity: null,
      maxDelayMs: null,
      binMs: 100,
      svg: 'out.svg',
      algorithms: [
        {
          algorithm: 'fixed-window',
          limitOptions: { algorithm: 'fixed-window', limit: 3, windowMs: 1000 },
          offered: 7,
          admitted: 6,
          refused: 1,
          maxAdmittedInWindow: 5,
          worstRetryAfterSeconds: 1,
          worstRetryAfterMs: 1,
          worstDelayMs: 0,
        },
      ],
    });
    expect(result.written['out.svg']).toMatch(/^<svg /);
  });

  test('--json writes a cost that can never pass as "Infinity"; nothing refused is null', async () => {
    const csv = 'timestamp,key,cost\n0,a,5\n1,b,1\n';
    const result = await run(['simulate', '--csv', 't.csv', '--limit', '2', '--algorithms', 'token-bucket', '--json'], { 't.csv': csv });
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ pattern: 'csv', requests: 2, keys: 2, durationMs: 1001 });
    expect(parsed.algorithms[0]).toMatchObject({ admitted: 1, refused: 1, worstRetryAfterMs: 'Infinity', worstRetryAfterSeconds: 1 });
    const none = JSON.parse((await run(['simulate', '--pattern', 'steady', '--rate', '1', '--json'])).stdout);
    expect(none.algorithms[0]).toMatchObject({ refused: 0, worstRetryAfterMs: null, worstRetryAfterSeconds: null });
  });

  test('--svg - writes the chart to stdout instead of the summary', async () => {
    const result = await run(['simulate', '--pattern', 'steady', '--algorithms', 'gcra', '--svg', '-']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^<svg [^]*<\/svg>\n$/);
  });
});
