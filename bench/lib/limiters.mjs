// The ratekit contenders, shared by the throughput and the memory parts.
//
// Every limit is so high that it is never reached (1e12, as in the peer
// benchmark), so each decision takes the admit path and writes state, the
// common case of a healthy service. The sliding log is the exception in
// window length, see SLIDING_LOG_WINDOW_MS.

const NEVER = 1e12;
const HOUR_MS = 3_600_000;

/**
 * The sliding log's window in the throughput part. The log keeps one entry
 * per distinct millisecond in the window (same-millisecond hits are merged)
 * and every decision copies it, so with a limit that is never reached its
 * cost grows with the window: over an hour a hot key would grow a log of up
 * to 3.6 M entries and the figure would measure that growth, not the
 * algorithm. Real sliding logs are bounded by a small `limit` (that is what
 * the algorithm is for) and then refuse, which is a different path. A 10 ms
 * window keeps the log bounded and every decision admitted: a hot key holds
 * at most 10 entries, as with a limit of 10 per window; across 100k keys
 * each key comes back after its window has passed, so it holds 1 entry
 * (the cheapest case: a stale log replaced by a fresh one).
 */
export const SLIDING_LOG_WINDOW_MS = 10;

/** One limit per algorithm, and a two-limit policy. `windowMs` of the sliding log differs per part (see above). */
export function limiterDefinitions({ slidingLogWindowMs }) {
  return [
    { id: 'fixed-window', label: 'fixed-window', limits: { algorithm: 'fixed-window', limit: NEVER, windowMs: HOUR_MS }, state: '[windowStartMs, used]' },
    {
      id: 'sliding-window',
      label: 'sliding-window',
      limits: { algorithm: 'sliding-window', limit: NEVER, windowMs: HOUR_MS },
      state: '[windowStartMs, previous, current]',
    },
    {
      id: 'sliding-log',
      label: `sliding-log (window ${formatWindow(slidingLogWindowMs)})`,
      limits: { algorithm: 'sliding-log', limit: NEVER, windowMs: slidingLogWindowMs },
      state: '[t₁, c₁, …] (1 entry here)',
    },
    { id: 'token-bucket', label: 'token-bucket', limits: { algorithm: 'token-bucket', limit: NEVER, windowMs: HOUR_MS }, state: '[tokens, refilledAtMs]' },
    { id: 'gcra', label: 'gcra', limits: { algorithm: 'gcra', limit: NEVER, windowMs: HOUR_MS }, state: '[tatMs]' },
    { id: 'delay', label: 'delay', limits: { algorithm: 'delay', limit: NEVER, windowMs: HOUR_MS }, state: '[waitUntilMs]' },
    {
      id: 'policy',
      label: 'policy: gcra/s + fixed-window/h',
      limits: [
        { algorithm: 'gcra', limit: NEVER, windowMs: 1_000, name: 'second' },
        { algorithm: 'fixed-window', limit: NEVER, windowMs: HOUR_MS, name: 'hour' },
      ],
      state: 'policy slab record [tatMs, windowStartMs, used]',
    },
  ];
}

/**
 * `createLimiter({ limits, store: memoryStore({ maxKeys }) })` from the built
 * core. The store's prune sweep is off (`pruneIntervalMs: 0`): it runs once a
 * minute by default, is not part of a decision, and would otherwise land in
 * one slice of a long run at random.
 */
export function buildLimiter(core, definition, maxKeys) {
  const store = core.memoryStore({ maxKeys, pruneIntervalMs: 0 });
  const limiter = core.createLimiter({ limits: definition.limits, store });
  return { limiter, store, limitCount: Array.isArray(definition.limits) ? definition.limits.length : 1 };
}

/** How the call under test is described in the tables. */
export const LIMITER_CALL = 'consume(key), memoryStore';

function formatWindow(ms) {
  return ms >= HOUR_MS && ms % HOUR_MS === 0 ? `${ms / HOUR_MS} h` : ms >= 1_000 && ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}
