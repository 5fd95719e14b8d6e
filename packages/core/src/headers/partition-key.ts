import { builtinModule } from '../builtin-module.js';
import { sha256 } from './sha256.js';

/** The most keys whose partition key is remembered; the memo is emptied when full. */
const MEMO_SIZE = 1_024;

let memo = new Map<string, string>();

const encoder = new TextEncoder();
const HEX = '0123456789abcdef';

type NodeCrypto = {
  /** One-shot digest (Node ≥ 20.12), about three times `createHash`'s speed on a short key. */
  hash?: (algorithm: 'sha256', data: string, encoding: 'hex') => string;
  createHash(algorithm: 'sha256'): { update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string } };
};

/** `node:crypto` where the runtime has it: its native SHA-256 is about 10 times the plain code's speed. */
const nodeCrypto = builtinModule<NodeCrypto>('node:crypto', (found) => typeof found.createHash === 'function');

/** SHA-256(text, UTF-8) in hexadecimal from `node:crypto`, one-shot where it can. */
function nativeSha256Hex(crypto: NodeCrypto): (text: string) => string {
  const { hash } = crypto;
  return typeof hash === 'function' ? (text) => hash('sha256', text, 'hex') : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** SHA-256(text, UTF-8) in hexadecimal from the plain code (./sha256.ts). */
function plainSha256Hex(text: string): string {
  const digest = sha256(encoder.encode(text));
  let hex = '';
  for (const byte of digest) hex += HEX[byte >> 4]! + HEX[byte & 15]!;
  return hex;
}

/**
 * SHA-256(text, UTF-8) in hexadecimal, synchronous on every runtime: `node:crypto` where it exists
 * (Node, Bun, Deno, Workers with `nodejs_compat`), else plain code (Web Crypto's `digest` is
 * asynchronous). Both give the same bytes (partition-key.test.ts, sha256.test.ts).
 */
const sha256Hex: (text: string) => string = nodeCrypto !== undefined ? nativeSha256Hex(nodeCrypto) : plainSha256Hex;

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
    value = btoa(sha256Hex(key).slice(0, 12));
    if (memo.size >= MEMO_SIZE) memo = new Map();
    memo.set(key, value);
  }
  return value;
}
