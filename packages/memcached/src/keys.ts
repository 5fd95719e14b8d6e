import { createHash } from 'node:crypto';

/**
 * Memcached keys for the store's items. Memcached keys are at most 250 bytes
 * with no spaces or control characters, and user keys are neither, so each
 * part of a key's identity is hashed:
 *
 *     <prefix><digest(namespace, key)>.<kind>[.<digest(limit id)>]
 *
 * A digest is the SHA-256 of the parts (UTF-16), each preceded by its length,
 * in base64url (43 characters, no `.`). The length prefix makes the encoding
 * injective: no (namespace, key) pair can spell another one, whatever
 * characters the user-controlled key holds, and the fixed-length digests keep
 * every key the same length (about 100 bytes with the default prefix).
 */

/** The kinds of item: the bucket item (all compare-and-set states of a key), a fixed-window counter, the two sliding-window slots. */
export type ItemKind = 'b' | 'f' | 's0' | 's1';

/** SHA-256 of the length-prefixed parts, base64url. */
export function digest(...parts: readonly string[]): string {
  return hashParts(parts).toString('base64url');
}

/**
 * SHA-256 of the parts, each as its UTF-16 code units preceded by their
 * count. UTF-16 keeps every JavaScript string distinct, lone surrogates
 * included (UTF-8 would turn them all into U+FFFD, so two different user
 * keys could share a budget).
 */
function hashParts(parts: readonly string[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) {
    hash.update(`${part.length}:`);
    hash.update(Buffer.from(part, 'utf16le'));
  }
  return hash.digest();
}

/** The items of one (namespace, key): their key base and the route that picks their server and connection. */
export interface KeyBase {
  /** `<prefix><digest>`; every item of the (namespace, key) starts with it. */
  readonly base: string;
  /** A 32-bit number from the digest: all items of one (namespace, key) share a server and a connection. */
  readonly route: number;
}

/** Derives item keys under `prefix`, caching the digests of limit ids (a store sees few distinct limits). */
export class KeySpace {
  private readonly limitDigests = new Map<string, string>();

  constructor(readonly prefix: string) {}

  /** The key base and route of (`namespace`, `key`). */
  base(namespace: string, key: string): KeyBase {
    const bytes = hashParts([namespace, key]);
    return { base: `${this.prefix}${bytes.toString('base64url')}`, route: bytes.readUInt32BE(0) };
  }

  /** The key of one item: `kind` `b` takes no limit id; the counters take one. */
  item(base: KeyBase, kind: ItemKind, limitId?: string): string {
    if (limitId === undefined) return `${base.base}.${kind}`;
    let limitDigest = this.limitDigests.get(limitId);
    if (limitDigest === undefined) {
      limitDigest = digest(limitId);
      if (this.limitDigests.size >= 10_000) this.limitDigests.clear();
      this.limitDigests.set(limitId, limitDigest);
    }
    return `${base.base}.${kind}.${limitDigest}`;
  }
}

/** The longest prefix accepted, in bytes, so that keys stay well under Memcached's 250. */
export const MAX_PREFIX_BYTES = 100;

/** True when `prefix` can start a Memcached key: printable ASCII without spaces, at most {@link MAX_PREFIX_BYTES}. */
export function isValidPrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && prefix.length <= MAX_PREFIX_BYTES && /^[\x21-\x7e]*$/.test(prefix);
}
