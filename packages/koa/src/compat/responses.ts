import ms from 'ms';

/**
 * koa-ratelimit 6's default refusal body, byte for byte:
 * `Rate limit exceeded, retry in <delta>.`, where `delta` is the ms until
 * the reset (truncated toward zero) in the `ms` package's long format
 * (`59 minutes`, `1 hour`, `999 ms`).
 *
 * @param deltaMs - ms until the reset, an integer
 */
export function defaultRefusalMessage(deltaMs: number): string {
  return `Rate limit exceeded, retry in ${ms(deltaMs, { long: true })}.`;
}

/**
 * The timing of a refusal as koa-ratelimit computes it from the driver's
 * reset (Unix epoch seconds) and the clock (`nowMs`): `deltaMs`, the ms
 * until the reset, and `after`, the `Retry-After` seconds, both truncated
 * toward zero (so `after` is `0` in the last second of a window, as
 * upstream sends).
 */
export function refusalTiming(resetSeconds: number, nowMs: number): { deltaMs: number; after: number } {
  return { deltaMs: (resetSeconds * 1000 - nowMs) | 0, after: (resetSeconds - nowMs / 1000) | 0 };
}
