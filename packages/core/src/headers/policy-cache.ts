/**
 * `RateLimit-Policy` values depend only on the limits (name, quota, window),
 * never on a request, so they are built once and reused: each distinct limit
 * is interned as a {@link PolicyEntry}, and each sequence of limits as a
 * {@link PolicyList} reached from its first entry through one `Map` lookup
 * per further limit (no string is built to find it). Both hold their header
 * text, computed on first use.
 *
 * The cache is bounded: when it holds {@link MAX_CACHED} entries and lists it
 * is emptied and refilled on demand, so limits computed per request (for
 * example a quota read from a user's plan) cannot grow it without bound.
 *
 * @module
 */
import { advertisedQuota, advertisedWindowMs } from './advertised-policy.js';
import type { HeaderStyle } from './options.js';
import { countValue, deltaSeconds } from './numbers.js';
import { sfString } from './sf-string.js';

/** What a `RateLimit-Policy` member depends on; a `LimitDecision` is one. */
export interface PolicyShape {
  /** The policy name (draft-8+ only). */
  readonly name: string;
  /** The quota per window. */
  readonly quota: number;
  /** The window, in ms. */
  readonly windowMs: number;
  /** The capacity, when it differs from the quota (a bucket's `burst`): see `advertised-policy.ts`. */
  readonly limit?: number;
}

/** The most entries and lists kept before the cache is emptied. */
export const MAX_CACHED = 4_096;

/** One limit's policy text, for the quota and window it advertises (`advertised-policy.ts`). */
export class PolicyEntry {
  /** The advertised quota as a header integer (rounded down). */
  readonly q: number;
  /** The window in whole seconds, rounded up, at least 1 (draft -09+ forbid `w=0`). */
  readonly w: number;
  /** The draft-6/7 member, `<q>;w=<w>`. */
  readonly draft6Member: string;
  /** The list of this limit alone. */
  readonly single: PolicyList;
  private quotedName: string | undefined;
  private spacedItem: string | undefined;
  private canonicalItem: string | undefined;

  constructor(
    readonly name: string,
    readonly quota: number,
    readonly windowMs: number,
  ) {
    this.q = countValue(quota);
    this.w = Math.max(1, deltaSeconds(windowMs));
    this.draft6Member = `${this.q};w=${this.w}`;
    this.single = new PolicyList([this]);
  }

  /**
   * The name as an sf-string, quoted and escaped.
   * @throws {RateKitOptionError} when the name is not printable ASCII
   */
  get sfName(): string {
    return (this.quotedName ??= sfString(this.name));
  }

  /** The draft-8+ `RateLimit-Policy` item without `pk`: `"name"; q=…; w=…` or `"name";q=…;w=…`. */
  draft8Item(style: HeaderStyle | undefined): string {
    if (style === 'canonical') return (this.canonicalItem ??= `${this.sfName};q=${this.q};w=${this.w}`);
    return (this.spacedItem ??= `${this.sfName}; q=${this.q}; w=${this.w}`);
  }
}

/** A sequence of limits, in policy order, with its joined header text. */
export class PolicyList {
  private children: Map<PolicyEntry, PolicyList> | undefined;
  private draft6Value: string | undefined;
  private spacedJoined: string | undefined;
  private canonicalJoined: string | undefined;

  constructor(readonly entries: readonly PolicyEntry[]) {}

  /** The list of these limits followed by `entry`. */
  child(entry: PolicyEntry): PolicyList {
    this.children ??= new Map();
    let list = this.children.get(entry);
    if (list === undefined) {
      list = new PolicyList([...this.entries, entry]);
      this.children.set(entry, list);
      cached++;
    }
    return list;
  }

  /**
   * The draft-6/7 `RateLimit-Policy` value, e.g. `10;w=1, 100;w=60`. Drafts
   * -06 and -07 require distinct quota values (they give `10;w=1, 10;w=60`
   * as an invalid example), so of limits sharing a quota only the one with
   * the longest window is listed (it makes the shorter one redundant), at its
   * place in the policy order; the first wins a tie.
   */
  get draft6(): string {
    if (this.draft6Value !== undefined) return this.draft6Value;
    let value = '';
    this.entries.forEach((entry, i) => {
      const dominated = this.entries.some((other, j) => j !== i && other.q === entry.q && (other.w > entry.w || (other.w === entry.w && j < i)));
      if (!dominated) value += value === '' ? entry.draft6Member : `, ${entry.draft6Member}`;
    });
    return (this.draft6Value = value);
  }

  /** The draft-8+ `RateLimit-Policy` items without `pk`, joined by `, `. */
  draft8Joined(style: HeaderStyle | undefined): string {
    if (style === 'canonical') return (this.canonicalJoined ??= this.entries.map((e) => e.draft8Item(style)).join(', '));
    return (this.spacedJoined ??= this.entries.map((e) => e.draft8Item(style)).join(', '));
  }
}

let byName = new Map<string, PolicyEntry[]>();
let cached = 0;

/** The interned entry of one limit, for the quota and window it advertises. */
export function policyEntry(limit: PolicyShape): PolicyEntry {
  const { name } = limit;
  const quota = advertisedQuota(limit);
  const windowMs = advertisedWindowMs(limit);
  let entries = byName.get(name);
  if (entries !== undefined) {
    for (const entry of entries) if (entry.quota === quota && entry.windowMs === windowMs) return entry;
  }
  if (cached >= MAX_CACHED) {
    byName = new Map();
    cached = 0;
    entries = undefined;
  }
  const entry = new PolicyEntry(name, quota, windowMs);
  if (entries === undefined) byName.set(name, [entry]);
  else entries.push(entry);
  cached++;
  return entry;
}

const EMPTY = new PolicyList([]);

/** The interned list of `limits`, in their order. */
export function policyList(limits: readonly PolicyShape[]): PolicyList {
  if (limits.length === 0) return EMPTY;
  let list = policyEntry(limits[0]!).single;
  for (let i = 1; i < limits.length; i++) list = list.child(policyEntry(limits[i]!));
  return list;
}

/** How many entries and lists are cached (for tests). */
export function cachedPolicyCount(): number {
  return cached;
}
