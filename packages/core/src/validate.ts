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

/**
 * Asserts that an options object names only known options. An unknown one
 * (a typo such as `burts` or `prefx`, which would otherwise be ignored in
 * silence) is refused, naming the closest known option when one is near.
 *
 * @param path - the object's option path (`''` for the top level, else e.g. `limits[0]`)
 */
export function assertKnownKeys(path: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const closest = closestName(key, known);
    const option = path === '' ? key : `${path}.${key}`;
    throw new RateKitOptionError(option, `unset: it is not an option${closest === undefined ? '' : ` (did you mean \`${closest}\`?)`}`, value[key]);
  }
}

/** The known name nearest to `name` by edit distance, if it is within a third of the name's length (at least 2). */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, with adjacent transpositions counted as one edit (`burts` → `burst`). */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
