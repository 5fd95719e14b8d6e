/**
 * The Redis keys of the deny lists, as `@upstash/ratelimit` 2.2.0 (and the Upstash console) name
 * them under a limiter's prefix:
 * - `<prefix>:denyList:all`: a set of every denied value (identifiers, IPs, user agents,
 *   countries), the union of the user's own lists and the IP list;
 * - `<prefix>:denyList:ipDenyList`: a set of the IPs downloaded from the public feed;
 * - `<prefix>:ipDenyListStatus`: `valid` until the next daily refresh (a TTL), `pending` for 30 s
 *   while one instance downloads, or `disabled` (no TTL).
 *
 * @module
 */

/** The three keys of `prefix`'s deny lists. */
export interface DenyListKeys {
  all: string;
  ipDenyList: string;
  status: string;
}

/** The deny-list keys under `prefix` (the limiter's, `@upstash/ratelimit` by default). */
export function denyListKeys(prefix: string): DenyListKeys {
  return { all: `${prefix}:denyList:all`, ipDenyList: `${prefix}:denyList:ipDenyList`, status: `${prefix}:ipDenyListStatus` };
}
