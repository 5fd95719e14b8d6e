import { sha256 } from './sha256.js';

/** The most keys whose partition key is remembered; the memo is emptied when full. */
const MEMO_SIZE = 1_024;

let memo = new Map<string, string>();

const encoder = new TextEncoder();
const HEX = '0123456789abcdef';

/**
 * The first 12 hexadecimal digits (6 bytes) of SHA-256(text, UTF-8). Plain code (./sha256.ts),
 * synchronous and the same on every runtime: Web Crypto's `digest` is asynchronous, and
 * `node:crypto` is not on Vercel's Edge runtime nor on Workers without `nodejs_compat`.
 */
function sha256Hex12(text: string): string {
  const digest = sha256(encoder.encode(text));
  let hex = '';
  for (let i = 0; i < 6; i++) hex += HEX[digest[i]! >> 4]! + HEX[digest[i]! & 15]!;
  return hex;
}

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
 * memoised (at most 1,024 keys), since the hash costs a microsecond or two.
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
    value = btoa(sha256Hex12(key));
    if (memo.size >= MEMO_SIZE) memo = new Map();
    memo.set(key, value);
  }
  return value;
}
