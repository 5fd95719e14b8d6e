/**
 * Errors raised by ratekit. Every error carries a stable `code` so callers can
 * branch on it without parsing messages, and each code is listed in
 * `docs/errors.md`.
 *
 * A refusal is never an error: it is a {@link Decision} with `allowed: false`.
 * Errors are for misconfiguration (thrown when a limiter is built), for
 * `wait()` giving up, and for store failures.
 *
 * @module
 */

/** The codes ratekit raises. */
export type RateKitErrorCode =
  /** An option failed validation when the limiter was built. */
  | 'ERR_RATEKIT_INVALID_OPTION'
  /** `wait()` would have had to wait longer than `maxWaitMs`. Nothing was charged. */
  | 'ERR_RATEKIT_WAIT_TIMEOUT'
  /** `wait()` can never succeed: the cost exceeds what the limits can ever hold. */
  | 'ERR_RATEKIT_NEVER_SATISFIABLE'
  /** A store call failed or timed out. The original error is in `cause`. */
  | 'ERR_RATEKIT_STORE'
  /** A key generator threw or returned no usable key. */
  | 'ERR_RATEKIT_KEY'
  /** @ratekit/flexible: a rate-limiter-flexible store outside its scope (Mongo, MySQL, DynamoDB…) was constructed. */
  | 'ERR_RATEKIT_FLEXIBLE_UNSUPPORTED_STORE';

/** Base class of every error ratekit raises. `code` is stable across versions. */
export class RateKitError extends Error {
  readonly code: RateKitErrorCode;

  constructor(code: RateKitErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[ratekit] ${message}`, options);
    this.name = 'RateKitError';
    this.code = code;
  }
}

/**
 * Thrown when a limiter is built with a bad option. The message names the
 * option, what was expected and what was given:
 * ``[ratekit] Expected `limits[0].windowMs` to be a positive finite number of milliseconds, got 0``.
 */
export class RateKitOptionError extends RateKitError {
  /** The option's path, for example `limits[1].burst`. */
  readonly option: string;
  /** What the option must be. */
  readonly expected: string;
  /** What was given. */
  readonly received: unknown;

  constructor(option: string, expected: string, received: unknown) {
    super('ERR_RATEKIT_INVALID_OPTION', `Expected \`${option}\` to be ${expected}, got ${describe(received)}`);
    this.name = 'RateKitOptionError';
    this.option = option;
    this.expected = expected;
    this.received = received;
  }
}

/** Renders a received value for an error message: `0`, `"1m"`, `undefined`, `an object`. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return 'an object';
}
