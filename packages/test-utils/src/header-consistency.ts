// The rule every response's rate-limit fields keep with each other (issue 38 §3), for any header set:
// - draft-8+: every `RateLimit` item's `r` is at most its policy's `q`;
// - draft-6/7: the remaining count is at most the limit, and the limit is a quota `RateLimit-Policy` lists;
// - legacy beside either: `X-RateLimit-Limit` is the binding limit's `q` and `X-RateLimit-Remaining` its `r`;
// - on a 429: `Retry-After` is the `t` (draft-8+) or `RateLimit-Reset` / `reset=` (draft-6/7) of the binding limit.
// `inconsistencies` returns what is broken, as sentences, so a property failure says which rule and where.
import { ALGORITHMS, type AlgorithmName, type LimitOptions } from '@ratekit/core';
import fc from 'fast-check';
import { type Item, parseList } from 'structured-headers';
import { T0 } from './test-store.js';

/** Reads one response header, by name, case-insensitively; `undefined` or `null` when absent. */
export type HeaderReader = (name: string) => string | null | undefined;

interface Draft8Item {
  name: string;
  params: Record<string, unknown>;
}

function draft8(field: string | null | undefined): Draft8Item[] {
  if (field === null || field === undefined) return [];
  return parseList(field).map((member) => {
    const [value, params] = member as Item;
    return { name: String(value), params: Object.fromEntries(params) };
  });
}

function integer(field: string | null | undefined): number | undefined {
  return field === null || field === undefined ? undefined : Number(field);
}

/** What breaks the rule on one response, empty when nothing does. */
export function inconsistencies(get: HeaderReader, status: number): string[] {
  const problems: string[] = [];
  const xLimit = integer(get('x-ratelimit-limit'));
  const xRemaining = integer(get('x-ratelimit-remaining'));
  const retryAfter = integer(get('retry-after'));

  const policies = draft8(get('ratelimit-policy')?.includes('q=') ? get('ratelimit-policy') : undefined);
  if (policies.length > 0) {
    const items = draft8(get('ratelimit'));
    const quota = new Map(policies.map((p) => [p.name, p.params.q as number]));
    for (const item of items) {
      const q = quota.get(item.name);
      if (q === undefined) problems.push(`RateLimit names ${item.name}, which RateLimit-Policy does not list`);
      else if ((item.params.r as number) > q) problems.push(`${item.name}: r=${String(item.params.r)} above q=${q}`);
    }
    if (xLimit !== undefined && !items.some((i) => quota.get(i.name) === xLimit && i.params.r === xRemaining)) {
      problems.push(
        `X-RateLimit-Limit ${xLimit} / Remaining ${String(xRemaining)} match no policy's q and r (${items.map((i) => `${i.name} q=${String(quota.get(i.name))} r=${String(i.params.r)}`).join(', ')})`,
      );
    }
    if (status === 429 && !items.some((i) => i.params.t === retryAfter)) {
      problems.push(`Retry-After ${String(retryAfter)} is no limit's t (${items.map((i) => String(i.params.t)).join(', ')})`);
    }
    return problems;
  }

  // draft-6 (RateLimit-Limit …) or draft-7 (RateLimit: limit=…, remaining=…, reset=…)
  let limit = integer(get('ratelimit-limit'));
  let remaining = integer(get('ratelimit-remaining'));
  let reset = integer(get('ratelimit-reset'));
  const draft7 = get('ratelimit');
  if (limit === undefined && draft7 !== null && draft7 !== undefined) {
    const fields = Object.fromEntries(draft7.split(',').map((part) => part.trim().split('=') as [string, string]));
    [limit, remaining, reset] = [integer(fields.limit), integer(fields.remaining), integer(fields.reset)];
  }
  if (limit !== undefined) {
    const listed = (get('ratelimit-policy') ?? '').split(',').map((member) => Number(member.trim().split(';')[0]));
    if (!listed.includes(limit)) problems.push(`limit ${limit} is no quota of RateLimit-Policy ${String(get('ratelimit-policy'))}`);
    if (remaining !== undefined && remaining > limit) problems.push(`remaining ${remaining} above limit ${limit}`);
    if (xLimit !== undefined && xLimit !== limit) problems.push(`X-RateLimit-Limit ${xLimit} is not the standard limit ${limit}`);
    if (xRemaining !== undefined && xRemaining !== remaining) problems.push(`X-RateLimit-Remaining ${xRemaining} is not the standard remaining ${String(remaining)}`);
    if (status === 429 && reset !== retryAfter) problems.push(`Retry-After ${String(retryAfter)} is not the reset ${String(reset)}`);
    return problems;
  }
  if (xLimit !== undefined && xRemaining !== undefined && xRemaining > xLimit) problems.push(`X-RateLimit-Remaining ${xRemaining} above X-RateLimit-Limit ${xLimit}`);
  return problems;
}

/** The options every adapter's ratekit mode takes for the property: limits, header set and clock. */
export interface HeaderConsistencyOptions {
  limits: LimitOptions[];
  standardHeaders: false | 'draft-6' | 'draft-7' | 'draft-8';
  legacyHeaders: boolean;
  now: () => number;
}

/** One request through an adapter: its status and a reader of its headers. */
export type AdapterRequest = () => Promise<{ status: number; get: HeaderReader }>;

const BUCKETS: readonly AlgorithmName[] = ['token-bucket', 'gcra', 'delay'];

/** One limit of any algorithm but delay (whose admissions an adapter holds), a bucket's burst below, at or above its limit. */
const adapterLimitArb: fc.Arbitrary<LimitOptions> = fc
  .record({
    algorithm: fc.constantFrom(...ALGORITHMS.filter((a) => a !== 'delay')),
    limit: fc.integer({ min: 1, max: 12 }),
    windowMs: fc.constantFrom(1_000, 1_500, 60_000),
    burst: fc.integer({ min: 1, max: 24 }),
  })
  .map(({ algorithm, limit, windowMs, burst }) => (BUCKETS.includes(algorithm) ? { algorithm, limit, windowMs, burst } : { algorithm, limit, windowMs }));

/**
 * The property, through an adapter: random limits (one, or two named apart), each header set, and random
 * traffic on a fixed clock; every response must keep {@link inconsistencies}' rule.
 *
 * @param makeApp - builds the adapter's ratekit-mode app for these options and returns one request to it
 */
export async function checkAdapterHeaderConsistency(makeApp: (options: HeaderConsistencyOptions) => AdapterRequest | Promise<AdapterRequest>, numRuns = 12): Promise<void> {
  const limitsArb = fc.oneof(
    adapterLimitArb.map((l) => [l]),
    fc.tuple(adapterLimitArb, adapterLimitArb).map(([a, b]) => [
      { ...a, name: 'first' },
      { ...b, name: 'second', windowMs: b.windowMs * 7 },
    ]),
  );
  const headersArb = fc.constantFrom<Pick<HeaderConsistencyOptions, 'standardHeaders' | 'legacyHeaders'>>(
    { standardHeaders: false, legacyHeaders: true },
    { standardHeaders: 'draft-6', legacyHeaders: true },
    { standardHeaders: 'draft-7', legacyHeaders: true },
    { standardHeaders: 'draft-8', legacyHeaders: true },
  );
  const gapsArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })), { minLength: 1, maxLength: 25 });
  await fc.assert(
    fc.asyncProperty(limitsArb, headersArb, gapsArb, async (limits, headers, gaps) => {
      let t = T0;
      const send = await makeApp({ limits, ...headers, now: () => t });
      for (const gap of gaps) {
        t += gap;
        const { status, get } = await send();
        const problems = inconsistencies(get, status);
        if (problems.length > 0) throw new Error(`status ${status}: ${problems.join('; ')}`);
      }
    }),
    // The issue's own case first: 10 per second with a burst of 20, draft-8 beside the legacy fields.
    { numRuns, examples: [[[{ algorithm: 'token-bucket', limit: 10, windowMs: 1_000, burst: 20 }], { standardHeaders: 'draft-8', legacyHeaders: true }, [0, 0]]] },
  );
}
