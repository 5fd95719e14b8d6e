/**
 * `IpDenyList`, as `@upstash/ratelimit` 2.2.0 exports it: refresh the IP deny list of a prefix
 * now (`updateIpDenyList`), turn it off (`disableIpDenyList`), and the `ThresholdError` of a
 * threshold outside 1-8. The same keys and values as the incumbent's (`<prefix>:denyList:all`,
 * `<prefix>:denyList:ipDenyList`, `<prefix>:ipDenyListStatus`), written in one script each, so
 * they work over `@upstash/redis`, ioredis and node-redis, on Upstash and open-source Redis 7.
 *
 * @example
 * ```ts
 * import { IpDenyList } from '@ratekit/upstash';
 *
 * await IpDenyList.updateIpDenyList(redis, '@upstash/ratelimit', 6); // download level 6 now
 * await IpDenyList.disableIpDenyList(redis, '@upstash/ratelimit'); // stop using the IP list
 * ```
 * @module
 */
import { disableIpDenyListWith, refreshIpDenyList } from './deny-list.js';
import { ipDenyListTtlMs } from './ip-deny-list-feed.js';
import { lazyRunner } from './script-runner.js';

export { ThresholdError } from './threshold-error.js';

/**
 * Downloads level `threshold` of the public IP feed (stamparm/ipsum on GitHub: the IPs on at least
 * `threshold` of its blacklists) and makes it `prefix`'s IP deny list: the old IPs leave
 * `<prefix>:denyList:all`, the new ones not already in the user's own lists join it, and the status
 * key is `valid` for `ttl` ms (by default until the next 2 AM UTC, after the feed's daily rebuild).
 * Overrides a `disabled` status.
 *
 * @param redis - an `@upstash/redis`, ioredis or node-redis 4+ client
 * @param prefix - the limiter's prefix (`@upstash/ratelimit` by default)
 * @param threshold - the feed's level, 1 (most IPs) to 8 (fewest)
 * @param ttl - how long the list is `valid`, ms
 * @returns the replies of the six steps, as the incumbent's MULTI gives them (`[n, n, n, n, n, 'OK']`)
 * @throws {ThresholdError} (a rejection) for a threshold other than a number from 1 to 8, before any download
 * @throws {Error} `Failed to fetch ip deny list: ...` when the download fails (nothing is written)
 */
export function updateIpDenyList(redis: unknown, prefix: string, threshold: number, ttl?: number): Promise<unknown> {
  return refreshIpDenyList(lazyRunner(redis), prefix, threshold, ttl ?? ipDenyListTtlMs(Date.now()));
}

/**
 * Turns `prefix`'s IP deny list off: its IPs leave `<prefix>:denyList:all`, the IP set is deleted,
 * and the status key is `disabled` without a TTL, so limiters no longer download the list (until
 * {@link updateIpDenyList}). The user's own deny-list entries stay.
 *
 * @returns the replies of the three steps, as the incumbent's MULTI gives them (`[n, n, 'OK']`)
 */
export function disableIpDenyList(redis: unknown, prefix: string): Promise<unknown> {
  return disableIpDenyListWith(lazyRunner(redis), prefix);
}
