/**
 * Options that only @ratekit/fastify has. A registration that gives none of
 * them (and no ratekit `store`) is a @fastify/rate-limit registration and
 * behaves as @fastify/rate-limit 11 does (src/compat/); one that gives any
 * of them runs on @ratekit/core (ratekit mode). `storeTimeoutMs` works in
 * both modes, so it does not choose one.
 */
export const RATEKIT_OPTIONS = ['algorithm', 'limits', 'cost', 'standardHeaders', 'legacyHeaders', 'onStoreError', 'now', 'refusalCache'] as const;

/**
 * True when the plugin's options opt into ratekit mode: a ratekit-only
 * option, or a ratekit store (an object with `evaluate`) as `store`.
 */
export function isRateKitMode(options: Readonly<Record<string, unknown>>): boolean {
  for (const name of RATEKIT_OPTIONS) if (options[name] !== undefined) return true;
  const store = options.store as { evaluate?: unknown } | undefined;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  return typeof store === 'object' && store !== null && typeof store.evaluate === 'function';
}

/** The ratekit-only options a route's (or `rateLimit()`'s) options give, which a @fastify/rate-limit registration cannot honour. */
export function rateKitOptionsIn(options: Readonly<Record<string, unknown>>): string[] {
  return RATEKIT_OPTIONS.filter((name) => options[name] !== undefined);
}
