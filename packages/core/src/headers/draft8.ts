/**
 * draft-ietf-httpapi-ratelimit-headers-08 to -11 (the same wire syntax),
 * express-rate-limit's `standardHeaders: 'draft-8'`: two Structured Fields
 * Lists with one member per limit of the policy, named by a quoted
 * sf-string.
 *
 * ```
 * RateLimit: "10-in-1sec"; r=7; t=1
 * RateLimit: "100-in-1min"; r=5; t=23
 * RateLimit-Policy: "10-in-1sec"; q=10; w=1; pk=:MTJjYTE3YjQ5YWYy:
 * RateLimit-Policy: "100-in-1min"; q=100; w=60; pk=:MTJjYTE3YjQ5YWYy:
 * ```
 *
 * - `q`: the quota per window, `w`: the window in whole seconds (≥ 1, rounded
 *   up), as the limit advertises them (`advertised-policy.ts`: a bucket whose
 *   burst differs from its limit shows its burst over the time to refill it), `pk`: the hashed partition key (express-rate-limit puts it in
 *   `RateLimit-Policy` only, and so do we).
 * - `r`: whole units remaining, `t`: seconds until the limit resets, or, for
 *   a limit that refused, until it admits the request again (see
 *   `retry-after.ts`).
 * - Every value is a non-negative Integer of at most 15 digits and every name
 *   printable ASCII with `"` and `\` escaped, so the fields always parse: a
 *   single bad member would make a client ignore the whole field.
 * - `style: 'express-rate-limit'` (default) writes `; ` between parameters,
 *   byte-identical to express-rate-limit; `'canonical'` writes RFC 9651's `;`.
 *   Both parse the same.
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { countValue, deltaSeconds } from './numbers.js';
import type { HeaderList, HeaderStyle } from './options.js';
import { partitionKey } from './partition-key.js';
import type { PolicyList } from './policy-cache.js';
import { limitResetMs } from './retry-after.js';

/** What the draft-8 writer reads from the options. */
export interface Draft8Options {
  readonly style?: HeaderStyle | undefined;
  readonly combineLists?: boolean | undefined;
  readonly partitionKey?: string | undefined;
}

/**
 * Appends `RateLimit` then `RateLimit-Policy` (express-rate-limit's order):
 * one entry per limit, or one comma-joined entry per field with
 * `combineLists`.
 *
 * @param policies - the decision's limits, interned, in the order of `decision.limits`
 * @throws {RateKitOptionError} when a limit's name is not printable ASCII
 * (names are checked when limits are resolved, so only for hand-built decisions)
 */
export function writeDraft8Headers(out: HeaderList, decision: Decision, policies: PolicyList, options: Draft8Options): void {
  const { entries } = policies;
  if (entries.length === 0) return;
  const canonical = options.style === 'canonical';
  const sep = canonical ? ';' : '; ';
  const pk = options.partitionKey === undefined ? undefined : `${sep}pk=:${partitionKey(options.partitionKey)}:`;
  const combine = options.combineLists === true;

  const rParam = canonical ? ';r=' : '; r=';
  const tParam = canonical ? ';t=' : '; t=';
  let joined = '';
  for (let i = 0; i < entries.length; i++) {
    const limit = decision.limits[i]!;
    const item = `${entries[i]!.sfName}${rParam}${countValue(limit.remaining)}${tParam}${deltaSeconds(limitResetMs(limit))}`;
    if (!combine) out.push(['RateLimit', item]);
    else joined += i === 0 ? item : `, ${item}`;
  }
  if (combine) out.push(['RateLimit', joined]);

  if (!combine) {
    for (const entry of entries) out.push(['RateLimit-Policy', pk === undefined ? entry.draft8Item(options.style) : entry.draft8Item(options.style) + pk]);
  } else if (pk === undefined) {
    out.push(['RateLimit-Policy', policies.draft8Joined(options.style)]);
  } else {
    let value = '';
    for (let i = 0; i < entries.length; i++) value += `${i === 0 ? '' : ', '}${entries[i]!.draft8Item(options.style)}${pk}`;
    out.push(['RateLimit-Policy', value]);
  }
}
