/**
 * RateLimit header formatting shared by every ratekit adapter: the legacy
 * `X-RateLimit-*` fields, the IETF drafts -06, -07 and -08 to -11, and
 * `Retry-After`, written from a {@link Decision}. Each format lives in its
 * own file (`legacy.ts`, `draft6.ts`, `draft7.ts`, `draft8.ts`,
 * `retry-after.ts`); this one picks them.
 *
 * Hand-built strings, no Structured Fields library: headers are written on
 * every response, a generic serialiser would allocate a Map per item and
 * parameter, and it would not enforce the drafts' own rules (non-negative
 * integers, printable names) anyway, which are checked here. The tests parse
 * every output with `structured-headers` to prove it is valid.
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { RateKitOptionError } from '../errors.js';
import { writeDraft6Headers } from './draft6.js';
import { writeDraft7Headers } from './draft7.js';
import { writeDraft8Headers } from './draft8.js';
import { writeLegacyHeaders } from './legacy.js';
import { type HeaderList, type HeaderOptions, STANDARD_HEADER_DRAFTS } from './options.js';
import { policyList } from './policy-cache.js';
import { bindingResetMs, retryAfterSeconds } from './retry-after.js';

export { STANDARD_HEADER_DRAFTS, resolveHeaderOptions } from './options.js';
export type { HeaderList, HeaderOptions, HeaderOptionsInput, HeaderStyle, LegacyResetFormat, StandardHeaders } from './options.js';
export { defaultPolicyName } from './policy-name.js';
export { partitionKey } from './partition-key.js';
export { retryAfterSeconds } from './retry-after.js';
export { assertPolicyName } from './sf-string.js';

/**
 * The body every adapter sends with a 429 by default, express-rate-limit's
 * default `message`, so a drop-in answers with the same bytes.
 */
export const DEFAULT_REFUSAL_MESSAGE = 'Too many requests, please try again later.';

/**
 * The rate-limit headers for a decision, in the order express-rate-limit
 * writes them: the legacy `X-RateLimit-*` fields, then the chosen IETF
 * draft's fields, then, on a refusal, `Retry-After`.
 *
 * - Legacy and draft-6/7 report the binding limit (`decision.limit`,
 *   `remaining`, and its reset); draft-6/7 `RateLimit-Policy` lists every
 *   limit; draft-8+ lists every limit in both fields, so the response shows
 *   each limit of a multi-limit policy.
 * - Every duration is whole seconds rounded up; every count is a whole
 *   number, never negative. A limit's reset is its `resetMs`, or for a limit
 *   that refused, the time until it admits the request again.
 * - `Retry-After` (see {@link retryAfterSeconds}) is at least 1 and never
 *   earlier than the reset reported for a refusing limit. It is sent on
 *   refusals when either header set is on, unless `retryAfter` says otherwise.
 * - `RateLimit-Policy` text depends only on the limits and is cached.
 *
 * Set the single-valued fields (a repeated legacy value such as `5, 3` reads
 * as 5); append or join the draft-8+ List fields (see {@link HeaderList}).
 *
 * @param decision - the limiter's decision for this request
 * @param options - which headers; validate them once with {@link resolveHeaderOptions}
 * @returns the headers to send, values as strings
 * @throws {RateKitOptionError} when `standardHeaders`, `legacyReset` or
 * `style` holds an unknown value, or (draft-8+) a policy name is not
 * printable ASCII, which resolved limits never are
 * @example
 * ```ts
 * const limiter = createLimiter({ limits: { limit: 100, windowMs: 15 * 60_000 } });
 * const decision = limiter.consume('127.0.0.1') as Decision;
 * rateLimitHeaders(decision, { standardHeaders: 'draft-8', legacyHeaders: false, partitionKey: '127.0.0.1' });
 * // [['RateLimit-Policy', '"100-in-15min"; q=100; w=900; pk=:MTJjYTE3YjQ5YWYy:'],
 * //  ['RateLimit', '"100-in-15min"; r=99; t=900']]
 * ```
 */
export function rateLimitHeaders(decision: Decision, options: HeaderOptions): HeaderList {
  const out: HeaderList = [];
  const { standardHeaders, legacyHeaders } = options;
  const resetMs = legacyHeaders || standardHeaders === 'draft-6' || standardHeaders === 'draft-7' ? bindingResetMs(decision) : 0;

  if (legacyHeaders) {
    const format = options.legacyReset ?? 'epoch';
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
    if (format !== 'epoch' && format !== 'delta') throw new RateKitOptionError('legacyReset', "'epoch' or 'delta'", format);
    writeLegacyHeaders(out, decision, resetMs, format);
  }

  switch (standardHeaders) {
    case false:
      break;
    case 'draft-6':
      writeDraft6Headers(out, decision, resetMs, policyList(decision.limits));
      break;
    case 'draft-7':
      writeDraft7Headers(out, decision, resetMs, policyList(decision.limits));
      break;
    case 'draft-8':
    case 'draft-9':
    case 'draft-10':
    case 'draft-11':
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
      if (options.style !== undefined && options.style !== 'express-rate-limit' && options.style !== 'canonical') {
        throw new RateKitOptionError('style', "'express-rate-limit' or 'canonical'", options.style);
      }
      writeDraft8Headers(out, decision, policyList(decision.limits), options);
      break;
    default:
      throw new RateKitOptionError('standardHeaders', `false or one of ${STANDARD_HEADER_DRAFTS.map((d) => `'${d}'`).join(', ')}`, standardHeaders);
  }

  if (!decision.allowed && (options.retryAfter ?? (legacyHeaders || standardHeaders !== false))) {
    out.push(['Retry-After', String(retryAfterSeconds(decision))]);
  }
  return out;
}
