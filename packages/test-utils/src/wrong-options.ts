/**
 * The option fuzz each adapter runs: every option given a value of the
 * wrong type must either be refused when the middleware is built, with a
 * coded `RateKitOptionError` naming it, or give an app that answers every
 * request without a 500 and with no non-finite number in a header.
 *
 * @module
 */
import fc from 'fast-check';

/** Values of every type, the non-finite numbers and the edge ones first among them. */
export function wrongValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -1,
      0,
      1,
      0.5,
      '',
      'x',
      '5',
      true,
      false,
      null,
      Symbol('wrong'),
      1n,
      {},
      [],
      [1],
      new Date(Number.NaN),
      () => undefined,
    ),
    fc.double(),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.bigInt({ min: -10n, max: 10n }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxKeys: 2 }),
    fc.array(fc.integer(), { maxLength: 3 }),
  );
}

/** What building the middleware with one wrong option gave. */
export type WrongOptionOutcome = { readonly thrown: unknown } | { readonly responses: ReadonlyArray<{ readonly status: number; readonly headers: Readonly<Record<string, unknown>> }> };

export interface WrongOptionsCheck {
  /** The options to fuzz (each is given alone, over the adapter's working defaults). */
  readonly options: readonly string[];
  /** Builds the middleware with `{ [option]: value }` over `variant`'s other options, and, when that did not throw, sends it a few requests. */
  readonly attempt: (option: string, value: unknown, variant: unknown) => Promise<WrongOptionOutcome>;
  /** Working configurations the wrong option is set over (e.g. each header draft); default one, `undefined`. */
  readonly variants?: readonly unknown[];
  /** An error other than `ERR_RATEKIT_INVALID_OPTION` the incumbent itself throws when built (its own message), accepted as a refusal. */
  readonly incumbentError?: (option: string, value: unknown, error: unknown) => boolean;
  /**
   * Accept a coded refusal naming another option than the one given (e.g. ratekit mode's
   * `windowMs` unset when `limits` is given). By default the refusal must name the option given.
   */
  readonly anyOptionNamed?: boolean;
  /** Options a function is the right type for: a function given to them is skipped (what it answers is checked when it runs). */
  readonly functionOptions?: readonly string[];
  readonly numRuns?: number;
}

/** Non-finite numbers as header text: `NaN`, `Infinity`, `-Infinity`. */
const NON_FINITE = /(^|[^A-Za-z])(NaN|Infinity)([^A-Za-z]|$)/;

/** The headers whose value carries a non-finite number. */
export function nonFiniteHeaders(headers: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(headers)
    .filter(([, value]) => (Array.isArray(value) ? value : [value]).some((v) => NON_FINITE.test(String(v))))
    .map(([name, value]) => `${name}: ${String(value)}`);
}

/** Why an outcome breaks the rule, or undefined when it keeps it. */
export function wrongOptionProblem(check: Pick<WrongOptionsCheck, 'incumbentError' | 'anyOptionNamed'>, option: string, value: unknown, outcome: WrongOptionOutcome): string | undefined {
  if ('thrown' in outcome) {
    const error = outcome.thrown as { code?: unknown; option?: unknown } | null;
    if (error?.code === 'ERR_RATEKIT_INVALID_OPTION' && (error.option === option || (check.anyOptionNamed === true && typeof error.option === 'string'))) return undefined;
    if (check.incumbentError?.(option, value, outcome.thrown) === true) return undefined;
    return `building threw something else than ERR_RATEKIT_INVALID_OPTION for ${option}: ${String(outcome.thrown)}`;
  }
  for (const { status, headers } of outcome.responses) {
    if (status >= 500) return `answered ${status}`;
    const bad = nonFiniteHeaders(headers);
    if (bad.length > 0) return `sent ${bad.join('; ')}`;
  }
  return undefined;
}

/** Runs the fuzz: each option × wrong-typed values (fast-check), and fails with the first counterexample. */
export async function checkWrongOptions(check: WrongOptionsCheck): Promise<void> {
  // The working configurations must build and serve: else every wrong value would be "refused" for nothing.
  for (const variant of check.variants ?? [undefined]) {
    const baseline = await check.attempt(check.options[0]!, undefined, variant);
    if ('thrown' in baseline) throw new Error(`the working configuration ${describeValue(variant)} does not build: ${String(baseline.thrown)}`);
    const problem = wrongOptionProblem(check, check.options[0]!, undefined, baseline);
    if (problem !== undefined) throw new Error(`the working configuration ${describeValue(variant)} ${problem}`);
  }
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...check.options), wrongValue(), fc.constantFrom(...(check.variants ?? [undefined])), async (option, value, variant) => {
      fc.pre(!(typeof value === 'function' && check.functionOptions?.includes(option) === true));
      const problem = wrongOptionProblem(check, option, value, await check.attempt(option, value, variant));
      if (problem !== undefined) throw new Error(`${option}: ${describeValue(value)} (over ${describeValue(variant)}) → ${problem}`);
    }),
    { numRuns: check.numRuns ?? 300 },
  );
}

/** A value as a counterexample shows it. */
export function describeValue(value: unknown): string {
  if (typeof value === 'symbol' || typeof value === 'function') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- typed string, but JSON.stringify returns undefined for `undefined` (and for a toJSON() returning it)
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
