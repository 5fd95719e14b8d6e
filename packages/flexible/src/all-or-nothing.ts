/**
 * The contract a store-backed limiter implements to take part in an
 * all-or-nothing {@link RateLimiterUnion} (`new RateLimiterUnion(a, b, { allOrNothing: true })`):
 * a request is charged to every limiter of the union, or to none of them.
 *
 * rate-limiter-flexible's union consumes every limiter in parallel and keeps
 * what the admitting limiters charged when another one refuses (rlf #150,
 * #280). An all-or-nothing union instead hands every limiter's key to one
 * participant in one call, and that call checks and charges all of them in
 * one atomic step: a Lua script on Redis, one synchronous pass over the maps
 * of in-process limiters. It is safe because nothing runs between the check
 * and the charge: no other request can see the counts half-written, so the
 * union never admits more than any limiter's `points` per window, and a
 * refusal leaves every count as it was.
 *
 * A participant reads its own clock (the memory limiter reads the process
 * clock; Redis reads the server's), as its `consume` does.
 *
 * Who takes part: a limiter that implements {@link AllOrNothingParticipant}.
 * Limiters can share one call only when they answer the same
 * `_allOrNothingStore` (the same Redis client; every in-process memory
 * limiter answers the one process-wide {@link PROCESS_MEMORY_STORE}). A
 * union over limiters of two stores cannot be made all-or-nothing correctly
 * (charging one store then refunding it on the other's refusal lets other
 * requests see, and be refused by, a charge that is then taken back, and a
 * refund that fails or lands after the window turned leaves a wrong count),
 * so the union refuses such a mix when it is built.
 *
 * @module
 */

/** One limiter's part in an all-or-nothing call: its key, what to add, and its limit. */
export interface AllOrNothingEntry {
  /** The limiter that owns the key (so one participant can reach the others' storage, or their key prefixes). */
  readonly limiter: AllOrNothingParticipant;
  /** The key as the limiter stores it: `limiter.getKey(key)`. */
  readonly rlKey: string;
  /** Points to add when every entry is admitted. */
  readonly points: number;
  /**
   * The window a missing or expired key starts with, in milliseconds
   * (`limiter.duration * 1000`); 0 means the key never expires, as in rlf.
   * A key that exists keeps its own expiry: adding points never extends it.
   */
  readonly msDuration: number;
  /** The most points the key may hold after the call for this entry to be admitted: `limiter.points`. */
  readonly limitPoints: number;
}

/** One entry's state, as the participant answers it. */
export interface AllOrNothingOutcome {
  /**
   * The key's points after the call when the union was admitted; when it was
   * refused, the points it would have held (the stored points plus the
   * entry's `points`), since nothing was written. An entry is refused when
   * this exceeds its `limitPoints`.
   */
  readonly consumedPoints: number;
  /**
   * Milliseconds until the key's window ends; -1 when it never expires. For a
   * key that does not exist (and was not written because the union was
   * refused), the window it would have started: `msDuration`, or -1 when
   * `msDuration` is 0 (what rlf reports for the refusal that creates a key).
   */
  readonly msBeforeNext: number;
}

/**
 * The answer of one all-or-nothing call: `admitted` is true when every
 * entry's `consumedPoints` is at most its `limitPoints`, and then every entry
 * was charged; when false, no entry was charged. `outcomes[i]` answers
 * `entries[i]`.
 */
export interface AllOrNothingAnswer {
  readonly admitted: boolean;
  readonly outcomes: readonly AllOrNothingOutcome[];
}

/**
 * Implemented by a limiter that can take part in an all-or-nothing union.
 *
 * The members are `_`-prefixed, rlf's convention for what users do not call.
 */
export interface AllOrNothingParticipant {
  /**
   * Identifies what one atomic call can cover: two limiters may share a call
   * only if this is the same value (`===`) for both. Redis answers its client,
   * the memory limiter answers {@link PROCESS_MEMORY_STORE}.
   */
  readonly _allOrNothingStore: object;
  /**
   * Checks every entry and charges all of them, or none when any would
   * exceed its `limitPoints`, in one atomic step. Every entry's `limiter` has
   * the same `_allOrNothingStore` as this one. Two entries may name the same
   * stored key (one limiter passed twice, or two limiters sharing a prefix on
   * one store): the later entry is checked and charged on top of the earlier
   * one, as two consumes in a row would be.
   *
   * Resolves with the {@link AllOrNothingAnswer}; rejects with an `Error`
   * when the store fails (and then the store was either charged for every
   * entry or for none: one atomic call).
   */
  _consumeAllOrNothing(entries: readonly AllOrNothingEntry[]): Promise<AllOrNothingAnswer>;
}

/** The store every in-process memory limiter answers: a JS process runs one step at a time, so one synchronous pass is atomic over all of them. */
export const PROCESS_MEMORY_STORE: object = Object.freeze({ store: 'process memory' });

/** True when `limiter` implements {@link AllOrNothingParticipant}. */
export function isAllOrNothingParticipant(limiter: unknown): limiter is AllOrNothingParticipant {
  if (typeof limiter !== 'object' || limiter === null) return false;
  const candidate = limiter as { _consumeAllOrNothing?: unknown; _allOrNothingStore?: unknown };
  return typeof candidate._consumeAllOrNothing === 'function' && typeof candidate._allOrNothingStore === 'object' && candidate._allOrNothingStore !== null;
}

/**
 * Whether every entry fits under its limit, given each entry's
 * `consumedPoints` as it would be after the charge. Pure; the rule a
 * participant applies, `consumed > limitPoints` refusing as rlf's
 * `consume` does.
 */
export function admitsAll(entries: readonly AllOrNothingEntry[], consumedAfter: readonly number[]): boolean {
  return entries.every((entry, i) => (consumedAfter[i] ?? Infinity) <= entry.limitPoints);
}
