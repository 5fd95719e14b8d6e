/**
 * Quoting for what the store sends to PostgreSQL: SQL identifiers (the
 * table and the names derived from it), and the user-controlled keys, which
 * PostgreSQL `text` cannot always hold as they are.
 *
 * @module
 */

/**
 * Quotes an SQL identifier the way PostgreSQL reads quoted identifiers:
 * wrapped in double quotes, with each double quote doubled. The same rule as
 * `escapeIdentifier` in `pg` (tested against it), written here so that `pg`
 * stays an optional peer dependency. Does not validate: see {@link assertIdentifier}.
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** PostgreSQL truncates identifiers longer than this many bytes (NAMEDATALEN − 1). */
export const MAX_IDENTIFIER_BYTES = 63;

/**
 * True when `name` can be an identifier as it is: a non-empty string without
 * NUL, at most {@link MAX_IDENTIFIER_BYTES} bytes once `suffixBytes` more are appended.
 * Longer names would be silently truncated by PostgreSQL, so derived names could collide.
 */
export function isIdentifier(name: unknown, suffixBytes = 0): name is string {
  return typeof name === 'string' && name.length > 0 && !name.includes('\u0000') && Buffer.byteLength(name, 'utf8') + suffixBytes <= MAX_IDENTIFIER_BYTES;
}

/** Matches what PostgreSQL `text` cannot hold (NUL, unpaired UTF-16 surrogates) and the escape character itself. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found: PostgreSQL text cannot hold it
const NEEDS_ESCAPE = /[\\\u0000]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NEEDS_ESCAPE_ALL = new RegExp(NEEDS_ESCAPE.source, 'g');

/**
 * Encodes a key or namespace for a PostgreSQL `text` column, one to one.
 *
 * PostgreSQL text cannot contain NUL, and a JavaScript string may hold
 * unpaired surrogates, which UTF-8 cannot encode (`pg` would send U+FFFD for
 * each, so two different keys would share one row). Those characters become
 * `\0` and `\uXXXX`, and the backslash itself becomes `\\`, so the encoding is
 * injective: distinct strings always give distinct column values. Every
 * other string (in practice, every key) is stored as it is. Does not mutate.
 */
export function encodeText(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(NEEDS_ESCAPE_ALL, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '\u0000') return '\\0';
    return `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}
