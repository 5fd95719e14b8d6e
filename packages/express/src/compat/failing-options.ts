import { assertPolicyName, RateKitOptionError } from '@ratekit/core';

/** What decides whether a value can only fail: which headers are sent, and who answers a refusal. */
export interface FailingOptionsContext {
  /** `X-RateLimit-*` or `RateLimit-*` headers are sent (they carry `limit`). */
  readonly headersOn: boolean;
  /** A refusal carries `Retry-After` (it carries `retryAfter`). */
  readonly retryAfterSent: boolean;
  /** The standard headers are draft-8 (they carry `identifier`). */
  readonly draft8: boolean;
  /** The default handler answers refusals (it uses `statusCode`); false for a custom `handler`, and for slowDown, which refuses nothing. */
  readonly defaultHandler: boolean;
  /** A refusal is answered by `handler` (false for slowDown). */
  readonly refuses: boolean;
}

/**
 * express-rate-limit mode takes options as express-rate-limit does, wrong
 * types included, except a value that can only fail: one that would make
 * every request (or every refused one) a 500, or put a non-finite number in
 * a header. Those are refused here, when the middleware is built. Each is
 * checked only where it is used (e.g. `identifier` with draft-8 only);
 * anything else keeps express-rate-limit's behaviour, e.g. a `limit` of
 * `'5'` (its arithmetic makes it 5).
 *
 * | option | refused when (express-rate-limit would…) |
 * | --- | --- |
 * | `skip`, `keyGenerator` | not a function (throw on every request: 500) |
 * | `handler` | not a function (500 on every refusal) |
 * | `statusCode` | with the default handler, not an integer from 100 to 999 (Express and Node refuse it: 500 on every refusal) |
 * | `requestPropertyName` | a value that cannot be a property name (an object with a null prototype: 500) |
 * | `windowMs` | a value its arithmetic throws on: a symbol, a bigint, an object with a null prototype (500) |
 * | `limit` / `max` | as `windowMs`; and with headers on, a value whose number is NaN or ±Infinity (`NaN` / `Infinity` in the headers) |
 * | `retryAfter` | as `windowMs`; and when `Retry-After` is sent, a non-finite number |
 * | `identifier` | with draft-8, a non-finite number, or a value that is not a policy name once made a string as express-rate-limit does (`"${identifier}"`) |
 *
 * @returns the draft-8 policy name for a static `identifier` (express-rate-limit's `String(identifier)`), else the option as given
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option, what it expects and what it got
 */
export function refuseWhatCanOnlyFail(options: Readonly<Record<string, unknown>>, context: FailingOptionsContext): { identifier: unknown } {
  for (const name of ['skip', 'keyGenerator'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new RateKitOptionError(name, 'a function of the request', options[name]);
  }
  if (context.refuses && options['handler'] !== undefined && typeof options['handler'] !== 'function') {
    throw new RateKitOptionError('handler', 'a function (req, res, next, options)', options['handler']);
  }
  const statusCode = options['statusCode'];
  if (context.refuses && context.defaultHandler && statusCode !== undefined && !(Number.isInteger(statusCode) && (statusCode as number) >= 100 && (statusCode as number) <= 999)) {
    throw new RateKitOptionError('statusCode', 'an HTTP status code, an integer from 100 to 999', statusCode);
  }
  const property = options['requestPropertyName'];
  if (property !== undefined && typeof property !== 'symbol') {
    try {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only whether it can be made a string matters (a null-prototype object cannot), as `req[property]` makes it one
      String(property);
    } catch {
      // `req[property]` throws on every request.
      throw new RateKitOptionError('requestPropertyName', 'a string', property);
    }
  }
  refuseUnusableNumber('windowMs', options['windowMs'], false);
  const limitName = options['limit'] === undefined ? 'max' : 'limit';
  refuseUnusableNumber(limitName, options[limitName], context.headersOn);
  if (context.refuses) refuseUnusableNumber('retryAfter', options['retryAfter'], context.retryAfterSent, true);

  const identifier = options['identifier'];
  if (!context.draft8 || identifier === undefined || typeof identifier === 'function') return { identifier };
  if (typeof identifier === 'symbol' || (typeof identifier === 'number' && !Number.isFinite(identifier))) throw new RateKitOptionError('identifier', POLICY_NAME, identifier);
  try {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as express-rate-limit: it makes whatever value it is given a string (`"${identifier}"`)
    const name = String(identifier);
    assertPolicyName('identifier', name);
    return { identifier: name };
  } catch {
    throw new RateKitOptionError('identifier', POLICY_NAME, identifier);
  }
}

const POLICY_NAME = 'a non-empty string of printable ASCII (0x20-0x7E), the draft-8 policy name, or a function of the request returning one';

/**
 * A static number option as express-rate-limit's arithmetic uses it: a bigint, a symbol or an object
 * that cannot become a number throws there (refused always); a value whose number is not finite is refused when `inHeader` (it would be written
 * there). Functions are checked when they answer.
 */
function refuseUnusableNumber(option: string, value: unknown, inHeader: boolean, numbersOnly = false): void {
  if (value === undefined || typeof value === 'function') return;
  const expected = option === 'windowMs' ? 'a number of milliseconds' : `a finite number${inHeader ? ' (it is sent in a header)' : ''}, or a function of the request returning one`;
  if (typeof value === 'bigint') throw new RateKitOptionError(option, expected, value);
  let number: number;
  try {
    number = Number(value);
  } catch {
    // A symbol, or an object with no way to become a number (a null prototype).
    throw new RateKitOptionError(option, expected, value);
  }
  if (inHeader && (numbersOnly ? typeof value === 'number' : true) && !Number.isFinite(number)) throw new RateKitOptionError(option, expected, value);
}
