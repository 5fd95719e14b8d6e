// The three algorithms the @ratekit/upstash benches compare (bench/upstash.mjs, bench/icount/), each with a limit
// never reached: the limiter of a `Ratelimit` class (the incumbent's, ours, or a twin's), and the same limit in
// @ratekit/core's terms, for @ratekit/redis.

/** A limit no bench reaches. */
const NEVER = 1e9;

/** The incumbent's limiter, and the same limit in @ratekit/redis's terms. */
export const UPSTASH_ALGORITHMS = [
  { id: 'fixed-window', upstash: (R) => R.fixedWindow(NEVER, '1 h'), core: { algorithm: 'fixed-window', limit: NEVER, windowMs: 3_600_000 } },
  { id: 'sliding-window', upstash: (R) => R.slidingWindow(NEVER, '1 h'), core: { algorithm: 'sliding-window', limit: NEVER, windowMs: 3_600_000 } },
  { id: 'token-bucket', upstash: (R) => R.tokenBucket(NEVER, '1 h', NEVER), core: { algorithm: 'token-bucket', limit: NEVER, windowMs: 3_600_000 } },
];

/** The entry of {@link UPSTASH_ALGORITHMS} named `id`; throws naming the three for any other. */
export function upstashAlgorithm(id) {
  const found = UPSTASH_ALGORITHMS.find((a) => a.id === id);
  if (found === undefined) throw new Error(`unknown algorithm ${JSON.stringify(id)}: one of ${UPSTASH_ALGORITHMS.map((a) => a.id).join(', ')}`);
  return found;
}
