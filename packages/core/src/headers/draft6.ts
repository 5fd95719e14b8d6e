/**
 * draft-ietf-httpapi-ratelimit-headers-06 (also -04, -05), express-rate-limit's
 * `standardHeaders: 'draft-6'`: `RateLimit-Policy` lists every limit as
 * `<quota>;w=<seconds>`, and `RateLimit-Limit` / `-Remaining` / `-Reset`
 * report the binding limit (the draft's "closest to running out": the lowest
 * remaining, the later reset on a tie, or on a refusal the refusing limit
 * with the longest wait). `RateLimit-Limit` is that limit's advertised quota,
 * one of the quotas `RateLimit-Policy` lists (each limit's quota per window;
 * a bucket whose burst differs from its limit advertises its burst over the
 * time to refill it: see `advertised-policy.ts`).
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { bindingQuota } from './advertised-policy.js';
import { countValue, deltaSeconds } from './numbers.js';
import type { HeaderList } from './options.js';
import type { PolicyList } from './policy-cache.js';

/**
 * Appends the draft-6 fields, in express-rate-limit's order:
 *
 * ```
 * RateLimit-Policy: 100;w=900
 * RateLimit-Limit: 100
 * RateLimit-Remaining: 99
 * RateLimit-Reset: 900
 * ```
 *
 * `RateLimit-Reset` is always sent (the draft: a response with
 * `RateLimit-Limit` MUST include it), `0` included.
 *
 * @param resetMs - ms until the binding limit resets (see `bindingResetMs`)
 * @param policies - the decision's limits, interned
 */
export function writeDraft6Headers(out: HeaderList, decision: Decision, resetMs: number, policies: PolicyList): void {
  if (policies.entries.length > 0) out.push(['RateLimit-Policy', policies.draft6]);
  out.push(['RateLimit-Limit', String(countValue(bindingQuota(decision)))], ['RateLimit-Remaining', String(countValue(decision.remaining))], ['RateLimit-Reset', String(deltaSeconds(resetMs))]);
}
