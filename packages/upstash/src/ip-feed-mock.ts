/**
 * For this package's tests only (not exported): the public IP deny list feed, served from memory.
 * Replaces the global `fetch` for the feed's URLs (both libraries fetch through it), letting every
 * other request (the local Upstash REST endpoint) through, so no test needs the internet.
 *
 * @module
 */
import { IP_DENY_LIST_FEED_URL } from './ip-deny-list-feed.js';

/** The mocked feed: which levels were asked for, and a way to put `fetch` back. */
export interface IpFeedMock {
  /** The URLs of the feed requested, in order. */
  readonly requested: string[];
  /** Holds every answer until {@link IpFeedMock.release} (to see the state before the download lands). */
  hold(): void;
  release(): void;
  restore(): void;
}

/**
 * Serves `levels[n]` (the file's text) for `<feed>/<n>.txt`, a 404 for another level, and
 * `failure` (a rejected fetch, as offline) when given.
 */
export function mockIpFeed(levels: Record<number, string>, failure?: Error): IpFeedMock {
  const original = globalThis.fetch;
  const requested: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(`${IP_DENY_LIST_FEED_URL}/`)) return original(input, init);
    requested.push(url);
    await gate;
    if (failure !== undefined) throw failure;
    const level = Number(/\/(\d+)\.txt$/.exec(url)?.[1]);
    const text = levels[level];
    return text === undefined ? new Response('404: Not Found', { status: 404, statusText: 'Not Found' }) : new Response(text);
  };
  return {
    requested,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
    restore() {
      globalThis.fetch = original;
    },
  };
}

/** `count` distinct documentation IPs (TEST-NET-3, 203.0.113.0/24, then on), one per line as the feed writes them. */
export function feedOf(count: number, from = 0): string {
  return Array.from({ length: count }, (_, i) => `203.0.${113 + Math.floor((from + i) / 256)}.${(from + i) % 256}`).join('\n') + '\n';
}
