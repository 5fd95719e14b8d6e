/**
 * What the runtime tests of @ratekit/fetch share: a clock to inject, requests, a client address and a
 * broken store. Test-only (not exported by the package); plain code, so it runs on every runtime.
 *
 * @module
 */
import type { RateLimitStore } from '@ratekit/core';

export const T0 = 1_700_000_000_000;
export const CLIENT = '203.0.113.7';

/** A GET of the API, with `headers`, aborted with `signal`. */
export function get(headers?: Record<string, string>, signal?: AbortSignal): Request {
  return new Request('https://api.example/items', { headers, signal });
}

/** A clock standing at T0 until a test moves it: `clock.t = …`; pass `clock.now`. */
export function testClock(): { t: number; readonly now: () => number } {
  const clock = { t: T0, now: () => clock.t };
  return clock;
}

/** A store whose every call fails, as a Redis that went away. */
export const broken: RateLimitStore = { name: 'broken', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('connection refused')), resetKey: () => undefined };
