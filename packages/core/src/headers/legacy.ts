/**
 * The legacy `X-RateLimit-*` headers, as express-rate-limit (`legacyHeaders`)
 * and @fastify/rate-limit send them: the binding limit's advertised quota (the
 * `q` of its `RateLimit-Policy`: see `advertised-policy.ts`), whole units
 * remaining, and its reset as an epoch second or as delta-seconds.
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { bindingQuota } from './advertised-policy.js';
import { countValue, deltaSeconds, epochSeconds } from './numbers.js';
import type { HeaderList, LegacyResetFormat } from './options.js';

/**
 * Appends `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 * `X-RateLimit-Reset` for the decision's binding limit.
 *
 * - `epoch`: `ceil((nowMs + resetMs) / 1000)`, express-rate-limit's
 *   `Math.ceil(resetTime / 1000)` (`X-RateLimit-Reset: 1795262423`);
 * - `delta`: `ceil(resetMs / 1000)`, @fastify/rate-limit's `Math.ceil(ttl / 1000)`.
 *
 * express-rate-limit also sets `Date`; Node sends `Date` on every response
 * already, so it is left out here.
 *
 * @param resetMs - ms until the binding limit resets (see `bindingResetMs`)
 */
export function writeLegacyHeaders(out: HeaderList, decision: Decision, resetMs: number, format: LegacyResetFormat): void {
  const reset = format === 'delta' ? deltaSeconds(resetMs) : epochSeconds(decision.nowMs, resetMs);
  out.push(['X-RateLimit-Limit', String(countValue(bindingQuota(decision)))], ['X-RateLimit-Remaining', String(countValue(decision.remaining))], ['X-RateLimit-Reset', String(reset)]);
}
