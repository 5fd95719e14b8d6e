/**
 * What the memory store judges of a key's state when it leaves: whether it has expired (so
 * dropping it loses nothing), how much budget it has left (so eviction knows whether to keep it
 * aside, see `eviction.ts`), and the prune walk that drops expired keys. Cold paths: run on an
 * eviction or a prune, never on a decision's usual path.
 *
 * @module
 */
import { algorithmOf } from '../algorithms/index.js';
import type { LimitState } from '../algorithms/types.js';
import type { ResolvedLimit } from '../limit.js';
import { stepLimit } from '../policy.js';
import { type Entry, isSlots } from './entry.js';
import type { GuardedKeys } from './eviction.js';

/**
 * The limit behind each of a store's slots: `primary` for the primary slot (the bare state of
 * an entry, or a Slots' `primary`), `bySlot` for the others, by slot id. A slot whose limit is
 * unknown counts as expired and as full.
 */
export interface SlotLimits {
  readonly primary: ResolvedLimit | undefined;
  readonly bySlot: ReadonlyMap<string, ResolvedLimit>;
}

/** The share (0–1) of budget a key's `entry` has left at `atMs`: the least over its limits. A blocked key has none. */
export function budgetLeft(entry: Entry, limits: SlotLimits, atMs: number): number {
  const left = (state: LimitState | undefined, limit: ResolvedLimit | undefined) => {
    if (state === undefined || limit === undefined) return 1;
    const step = stepLimit(state, limit, 0, atMs); // a blocked key has nothing left
    return step.tokensAfter / step.capacity;
  };
  if (!isSlots(entry)) return left(entry, limits.primary);
  let least = left(entry.primary, limits.primary);
  for (let i = 0; i < entry.others.length; i += 2) least = Math.min(least, left(entry.others[i + 1] as LimitState, limits.bySlot.get(entry.others[i] as string)));
  return least;
}

/** True when every state of `entry` has expired at `nowMs` (each algorithm's `ttlMs` is 0), so a fresh state is the same. */
export function expired(entry: Entry, limits: SlotLimits, nowMs: number): boolean {
  const live = (state: LimitState | undefined, limit: ResolvedLimit | undefined) => state !== undefined && limit !== undefined && algorithmOf(limit.algorithm).ttlMs(state, limit, nowMs) > 0;
  if (!isSlots(entry)) return !live(entry, limits.primary);
  if (live(entry.primary, limits.primary)) return false;
  for (let i = 0; i < entry.others.length; i += 2) {
    if (live(entry.others[i + 1] as LimitState, limits.bySlot.get(entry.others[i] as string))) return false;
  }
  return true;
}

/** What {@link pruneExpired} walks: the LRU's keys from the least recently used, and a key's entry. */
export interface PruneTarget {
  /** Keys from the least recently used end. */
  rkeys(): Iterable<string>;
  /** The entry of a key `rkeys` just gave. */
  entryOf(key: string): Entry;
  /** Drops a key; true when it was held. */
  delete(key: string): boolean;
}

/** After this many live keys in a row, a prune stops: the rest, more recently used, is likely live too. */
const LIVE_RUN = 1_000;

/**
 * Drops the expired keys of `lru`, walking from its least recently used end and stopping after
 * {@link LIVE_RUN} live keys in a row (so a sweep stays short on a big store), and every expired
 * key kept aside in `guarded`. Returns how many were dropped.
 */
export function pruneExpired(lru: PruneTarget, guarded: GuardedKeys<Entry>, limits: SlotLimits, nowMs: number): number {
  let dropped = 0;
  let liveRun = 0;
  const doomed: string[] = [];
  for (const key of lru.rkeys()) {
    if (expired(lru.entryOf(key), limits, nowMs)) {
      doomed.push(key);
      liveRun = 0;
    } else if (++liveRun >= LIVE_RUN) break;
  }
  for (const key of doomed) if (lru.delete(key)) dropped++;
  const doomedAside: string[] = [];
  for (const [key, entry] of guarded.entries()) if (expired(entry, limits, nowMs)) doomedAside.push(key);
  for (const key of doomedAside) if (guarded.delete(key)) dropped++;
  return dropped;
}
