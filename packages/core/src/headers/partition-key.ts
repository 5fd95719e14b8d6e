import * as crypto from 'node:crypto';

/** The most keys whose partition key is remembered; the memo is emptied when full. */
const MEMO_SIZE = 1_024;

let memo = new Map<string, string>();

/** SHA-256 as hex: the one-shot `crypto.hash` where the runtime has it (Node ≥ 20.12), else `createHash`. */
const sha256Hex: (data: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (data) => (crypto as unknown as { hash(algorithm: string, data: string, encoding: 'hex'): string }).hash('sha256', data, 'hex')
    : (data) => crypto.createHash('sha256').update(data).digest('hex');

/**
 * The draft-8 partition key (`pk`) for a limiter key, exactly as
 * express-rate-limit v8 computes it, so a drop-in sends the same bytes: the
 * base64 of the ASCII text of the first 12 hexadecimal digits of
 * SHA-256(key, UTF-8). (Not the base64 of the hash bytes: the quirk is kept on
 * purpose.) Always 16 base64 characters, without padding. The raw key, often
 * an IP address, never reaches the wire, as the drafts ask (§ Privacy).
 *
 * Returns the Byte Sequence's base64 content only; the caller writes the
 * surrounding colons (`pk=:MmMyNmI0NmI2OGZm:`). Results for recent keys are
 * memoised (at most 1,024 keys), since the hash costs about a microsecond.
 *
 * @see https://github.com/express-rate-limit/express-rate-limit `source/headers.ts`, `getPartitionKey`
 * @example
 * ```ts
 * partitionKey('foo');       // 'MmMyNmI0NmI2OGZm'
 * partitionKey('127.0.0.1'); // 'MTJjYTE3YjQ5YWYy'
 * ```
 */
export function partitionKey(key: string): string {
  let value = memo.get(key);
  if (value === undefined) {
    value = btoa(sha256Hex(key).slice(0, 12));
    if (memo.size >= MEMO_SIZE) memo = new Map();
    memo.set(key, value);
  }
  return value;
}
