/**
 * draft-ietf-httpapi-ratelimit-headers-07, express-rate-limit's
 * `standardHeaders: 'draft-7'`: `RateLimit-Policy` as in draft-6, and the
 * binding limit in one Structured Fields Dictionary,
 * `RateLimit: limit=<n>, remaining=<n>, reset=<seconds>`.
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { bindingQuota } from './advertised-policy.js';
import { countValue, deltaSeconds } from './numbers.js';
import type { HeaderList } from './options.js';
import type { PolicyList } from './policy-cache.js';

/**
 * Appends the draft-7 fields, in express-rate-limit's order:
 *
 * ```
 * RateLimit-Policy: 100;w=900
 * RateLimit: limit=100, remaining=99, reset=900
 * ```
 *
 * Members are separated by `, ` (a `;` would turn them into parameters of
 * `limit`); `remaining` is always sent, although the draft makes it optional.
 *
 * @param resetMs - ms until the binding limit resets (see `bindingResetMs`)
 * @param policies - the decision's limits, interned
 */
export function writeDraft7Headers(out: HeaderList, decision: Decision, resetMs: number, policies: PolicyList): void {
  if (policies.entries.length > 0) out.push(['RateLimit-Policy', policies.draft6]);
  out.push(['RateLimit', `limit=${countValue(bindingQuota(decision))}, remaining=${countValue(decision.remaining)}, reset=${deltaSeconds(resetMs)}`]);
}
