/**
 * Errors of the `ratekit` command. Every error has a stable `code`; argument
 * errors also name the argument, what was expected and what was given, and
 * read like core's option errors:
 * ``[ratekit] Expected `--rate` to be a positive number of requests per second, got "fast"``.
 *
 * @module
 */

/** The codes the command raises (see packages/cli/README.md). */
export type CliErrorCode =
  /** An argument has a bad value: not a number, out of range, an unknown pattern or algorithm. */
  | 'ERR_RATEKIT_CLI_INVALID_ARGUMENT'
  /** An option the command does not know, or a command other than `simulate`. */
  | 'ERR_RATEKIT_CLI_UNKNOWN_ARGUMENT'
  /** A required argument is missing (an option without its value, `--pattern csv` without `--csv`). */
  | 'ERR_RATEKIT_CLI_MISSING_ARGUMENT'
  /** The CSV file cannot be read, or a row of it is not `timestamp[,key[,cost]]`. */
  | 'ERR_RATEKIT_CLI_CSV';

/** An error of the `ratekit` command: a usage error (exit code 2). */
export class CliError extends Error {
  readonly code: CliErrorCode;
  /** The argument at fault, e.g. `--rate`, or the CSV file's path. */
  readonly argument: string;
  /** What the argument must be. */
  readonly expected: string;
  /** What was given (as typed), or undefined when nothing was. */
  readonly received: string | undefined;

  constructor(code: CliErrorCode, argument: string, expected: string, received: string | undefined, message?: string) {
    super(`[ratekit] ${message ?? `Expected \`${argument}\` to be ${expected}, got ${received === undefined ? 'nothing' : JSON.stringify(received)}`}`);
    this.name = 'CliError';
    this.code = code;
    this.argument = argument;
    this.expected = expected;
    this.received = received;
  }
}
