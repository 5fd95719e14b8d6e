import { RateKitOptionError } from './errors.js';

/**
 * Small, named option checks. Each throws {@link RateKitOptionError} naming
 * the option, so every bad option fails when the limiter is built.
 * Internal: adapters re-use them through the public `assert*` re-exports.
 */

/** Asserts a finite number greater than zero. */
export function assertPositive(option: string, value: unknown, unit = ''): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RateKitOptionError(option, `a positive finite number${unit}`, value);
  }
}

/** Asserts a finite number greater than or equal to zero. */
export function assertNonNegative(option: string, value: unknown, unit = ''): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RateKitOptionError(option, `a finite number >= 0${unit}`, value);
  }
}

/** Asserts an integer greater than or equal to `min`. */
export function assertInteger(option: string, value: unknown, min: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new RateKitOptionError(option, `an integer >= ${min}`, value);
  }
}

/** Asserts one of the listed string values. */
export function assertOneOf<T extends string>(option: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new RateKitOptionError(option, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
  }
}

/** Asserts a function. */
export function assertFunction(option: string, value: unknown): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new RateKitOptionError(option, 'a function', value);
}

/** Asserts a non-empty string. */
export function assertNonEmptyString(option: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) throw new RateKitOptionError(option, 'a non-empty string', value);
}

/** Asserts a plain object (not null, not an array). */
export function assertObject(option: string, value: unknown): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RateKitOptionError(option, 'an object', value);
  }
}
