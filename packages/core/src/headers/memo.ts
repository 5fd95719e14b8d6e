/**
 * The header list of {@link rateLimitHeaders}, kept while the values it is made of stay the same:
 * for the adapters, which write the same few headers on every refused response of a flood.
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { bindingQuota } from './advertised-policy.js';
import { rateLimitHeaders } from './index.js';
import { countValue, deltaSeconds, epochSeconds } from './numbers.js';
import type { HeaderList, HeaderOptions } from './options.js';
import { bindingResetMs, retryAfterSeconds } from './retry-after.js';

/**
 * `rateLimitHeaders(decision, options)` for one options object, as a function of the decision
 * that returns the list it returned last time while the figures the headers are made of are
 * unchanged: so a flood of refusals builds its header strings once per second (the figures are
 * whole seconds and whole counts), not once per response. The list is exact, never stale: it is
 * reused only when every value that goes into it is equal.
 *
 * Kept for options without standard fields (the legacy `X-RateLimit-*` fields and `Retry-After`:
 * every adapter's default in ratekit mode), whose only inputs are the binding limit's advertised quota and
 * remaining count, its reset (epoch or delta seconds), whether the decision refused and
 * `Retry-After`. With standard fields, every call is `rateLimitHeaders(decision, options)`, read
 * afresh (a `partitionKey` set on `options` per request included).
 *
 * The list returned is shared between calls: write it out, never modify it.
 *
 * @param options - validated with `resolveHeaderOptions`, and not changed afterwards (but for
 * `partitionKey`, which only standard fields read)
 */
export function headerListOf(options: HeaderOptions): (decision: Decision) => Readonly<HeaderList> {
  if (options.standardHeaders !== false) return (decision) => rateLimitHeaders(decision, options);
  const { legacyHeaders } = options;
  const format = options.legacyReset ?? 'epoch';
  // rateLimitHeaders' rule for standardHeaders false.
  const retryAfter = options.retryAfter ?? legacyHeaders;
  let last: Readonly<HeaderList> | undefined;
  let lastAllowed = false;
  let lastLimit = 0;
  let lastRemaining = 0;
  let lastReset = 0;
  let lastRetry = 0;
  return (decision) => {
    const allowed = decision.allowed;
    let limit = 0;
    let remaining = 0;
    let reset = 0;
    if (legacyHeaders) {
      // As writeLegacyHeaders, after rateLimitHeaders' `resetMs`.
      const resetMs = bindingResetMs(decision);
      limit = countValue(bindingQuota(decision));
      remaining = countValue(decision.remaining);
      reset = format === 'delta' ? deltaSeconds(resetMs) : epochSeconds(decision.nowMs, resetMs);
    }
    const retry = !allowed && retryAfter ? retryAfterSeconds(decision) : 0;
    if (last !== undefined && allowed === lastAllowed && limit === lastLimit && remaining === lastRemaining && reset === lastReset && retry === lastRetry) return last;
    const list = rateLimitHeaders(decision, options);
    last = list;
    lastAllowed = allowed;
    lastLimit = limit;
    lastRemaining = remaining;
    lastReset = reset;
    lastRetry = retry;
    return list;
  };
}
