import { RateKitOptionError } from '../errors.js';

/**
 * True when `value` can be a Structured Fields String (RFC 9651 §3.3.3):
 * printable ASCII only, 0x20 to 0x7E. Tabs, line breaks, other control
 * characters and non-ASCII cannot be sent (the drafts do not allow Display
 * Strings for policy names).
 */
export function isSfStringSafe(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) return false;
  }
  return true;
}

/**
 * Asserts a policy name that can be sent in the draft-8+ `RateLimit` and
 * `RateLimit-Policy` fields: a non-empty string of printable ASCII (`"` and
 * `\` are allowed; they are escaped when sent).
 *
 * @throws {RateKitOptionError} naming `option`, when the name is empty, not a
 * string, or holds a character outside 0x20–0x7E.
 * @example
 * ```ts
 * assertPolicyName('limits[0].name', 'per-minute'); // ok
 * assertPolicyName('limits[0].name', 'café');       // throws
 * ```
 */
export function assertPolicyName(option: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || !isSfStringSafe(name)) {
    throw new RateKitOptionError(option, 'a non-empty string of printable ASCII (0x20-0x7E), usable as a RateLimit policy name', name);
  }
}

/**
 * `value` as a Structured Fields String: in double quotes, with `"` and `\`
 * escaped by a backslash (RFC 9651 §4.1.6; the only escapes it allows).
 *
 * @throws {RateKitOptionError} (option `name`) when `value` is not printable ASCII.
 * @example
 * ```ts
 * sfString('100-in-1min'); // '"100-in-1min"'
 * sfString('a"b');         // '"a\\"b"'
 * ```
 */
export function sfString(value: string, option = 'name'): string {
  assertPolicyName(option, value);
  let out = '"';
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x22 || code === 0x5c) {
      out += `${value.slice(start, i)}\\`;
      start = i;
    }
  }
  return `${out}${value.slice(start)}"`;
}
