/**
 * The public IP deny list the incumbent downloads: stamparm/ipsum's `levels/<n>.txt` on GitHub,
 * one IP per line, `<n>` (1-8) the least number of the feed's 30-odd blacklists an IP is on. The
 * feed is rebuilt once a day; the list in Redis is marked valid until the next 2 AM UTC, a little
 * after that rebuild.
 *
 * @module
 */

/** Where the levels are, as `@upstash/ratelimit` 2.2.0 fetches them. */
export const IP_DENY_LIST_FEED_URL = 'https://raw.githubusercontent.com/stamparm/ipsum/master/levels';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const REFRESH_HOUR_UTC = 2;

/**
 * Milliseconds from `nowMs` (Unix epoch ms) to the next 2 AM UTC: the TTL of the status key after
 * a download. Exactly at 2 AM it is a whole day. Pure.
 *
 * @example
 * ```ts
 * ipDenyListTtlMs(Date.UTC(2026, 0, 1, 1, 0)); // 3_600_000 (one hour, to 02:00)
 * ```
 */
export function ipDenyListTtlMs(nowMs: number): number {
  const sinceRefresh = (((nowMs - REFRESH_HOUR_UTC * HOUR_MS) % DAY_MS) + DAY_MS) % DAY_MS;
  return DAY_MS - sinceRefresh;
}

/**
 * Downloads level `threshold` of the feed with the global `fetch`: the non-empty lines.
 *
 * @throws {Error} `Failed to fetch ip deny list: ...` (the incumbent's message) when the request
 *   fails or answers other than 2xx
 */
export async function downloadIpDenyList(threshold: number): Promise<string[]> {
  let text: string;
  try {
    const response = await fetch(`${IP_DENY_LIST_FEED_URL}/${threshold}.txt`);
    if (!response.ok) throw new Error(`Error fetching data: ${response.statusText}`);
    text = await response.text();
  } catch (error) {
    throw new Error(`Failed to fetch ip deny list: ${String(error)}`, { cause: error });
  }
  return text.split('\n').filter((line) => line.length > 0);
}
