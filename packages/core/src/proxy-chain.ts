/**
 * The client's address behind proxies of yours, for adapters that see the
 * connection's address but not their framework's `trust proxy` (Hono, the
 * Fetch API). The rule, and why it is safe: each proxy appends to
 * `X-Forwarded-For` the address it received the request from, so only the
 * right-hand entries were written by proxies you run; the chain is read from
 * the connection leftwards, and stops at the first address that is not a
 * proxy of yours. A client can write anything to the left of that, and it is
 * never reached. Trusting every hop (Express's `trust proxy: true`) is not
 * expressible: any client could then choose its own key.
 *
 * @module
 */

/**
 * Which connections are proxies of yours, whose `X-Forwarded-For` entries to
 * believe: `false` (none), a number of hops (`1`: one load balancer in front
 * of the app), or a function of an address and its hop (0 = the connection)
 * returning true for a proxy of yours.
 */
export type TrustProxy = false | number | ((address: string, hop: number) => boolean);

/**
 * The client's address in the proxy chain: the connection's `socket`, then
 * `forwardedFor`'s entries right to left (blank ones skipped); the first one
 * `trustProxy` does not trust, or the leftmost when it trusts them all.
 *
 * @param socket - the connection's address
 * @param forwardedFor - the `X-Forwarded-For` header, if any
 * @param trustProxy - hops to trust, or a function deciding per address and hop
 * @example
 * ```ts
 * clientAddress('10.0.0.2', '203.0.113.7, 198.51.100.9', 1); // '198.51.100.9'
 * clientAddress('10.0.0.2', '203.0.113.7, 198.51.100.9', 2); // '203.0.113.7'
 * ```
 */
export function clientAddress(socket: string, forwardedFor: string | null | undefined, trustProxy: Exclude<TrustProxy, false>): string {
  const chain = [socket];
  if (typeof forwardedFor === 'string') {
    const entries = forwardedFor.split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!.trim();
      if (entry !== '') chain.push(entry);
    }
  }
  const trusted = typeof trustProxy === 'number' ? (_: string, hop: number) => hop < trustProxy : trustProxy;
  let hop = 0;
  while (hop < chain.length - 1 && trusted(chain[hop]!, hop)) hop++;
  return chain[hop]!;
}
