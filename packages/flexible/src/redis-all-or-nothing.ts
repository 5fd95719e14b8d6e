/**
 * An all-or-nothing RateLimiterUnion on Redis (see all-or-nothing.ts): every
 * limiter's key, on one client, checked and charged in one call of
 * ALL_OR_NOTHING_SCRIPT (redis-scripts.ts).
 *
 * Why it is atomic: Redis runs a script without interruption, so no other
 * operation sees a key charged while another is not, and the check and the
 * charge read the same counts. A refusal writes nothing. An admitted call
 * charges each key exactly as a lone consume does (the same operation, with
 * rlf's TTL rules), so the data stays rate-limiter-flexible's.
 *
 * On a Redis Cluster one script can only touch keys of one hash slot: keys
 * on different slots fail the call with a clear error before anything is
 * sent (give the keys a common hash tag, e.g. `{user42}`).
 */
import type { AllOrNothingAnswer, AllOrNothingEntry, AllOrNothingOutcome } from './all-or-nothing.js';
import type { RedisTransport } from './redis-client.js';
import { ALL_OR_NOTHING_SCRIPT, ALL_OR_NOTHING_SCRIPT_SHA } from './redis-scripts.js';

/** The code of the error for keys of an all-or-nothing union on different Cluster slots. */
export const CROSS_SLOT_CODE = 'ERR_RATEKIT_FLEXIBLE_CROSS_SLOT';

/** An error with a `code`. */
export interface CodedError extends Error {
  readonly code: string;
}

/**
 * The error for an all-or-nothing union whose keys land on different
 * Cluster slots, or undefined when they share one (or the client is not a
 * cluster's).
 */
export function crossSlotError(transport: RedisTransport, keys: readonly string[]): CodedError | undefined {
  const slotOf = transport.slotOf;
  if (slotOf === undefined || keys.length < 2) return undefined;
  const first = slotOf(keys[0]!);
  const other = keys.find((key) => slotOf(key) !== first);
  if (other === undefined) return undefined;
  const error = new Error(
    `RateLimiterUnion (allOrNothing): on a Redis Cluster every limiter's key must be on one hash slot, and ${JSON.stringify(keys[0])} (slot ${first}) and ${JSON.stringify(other)} (slot ${slotOf(other)}) are not. Put a hash tag in the key, e.g. consume('{user42}'): the keys then share the slot of "user42".`,
  ) as Error & { code: string };
  error.code = CROSS_SLOT_CODE;
  return error;
}

/** The script's arguments for `entries`: their count, then points, TTL seconds and limit of each. */
export function allOrNothingArguments(entries: readonly AllOrNothingEntry[]): string[] {
  const args = [String(entries.length)];
  for (const entry of entries) args.push(String(entry.points), String(Math.max(Math.floor(entry.msDuration / 1000), 0)), String(entry.limitPoints));
  return args;
}

/**
 * The answer from the script's reply `{admitted, count₁, pttl₁, …}`. A key
 * the refused call did not write (PTTL -2: missing) reports the window it
 * would have started: its whole seconds × 1000, or -1 when that is 0 (no
 * TTL, as a lone consume of a sub-second duration leaves it).
 * @throws Error when the reply is not of that shape
 */
export function allOrNothingAnswer(entries: readonly AllOrNothingEntry[], reply: unknown): AllOrNothingAnswer {
  if (!Array.isArray(reply) || reply.length !== 1 + 2 * entries.length || (reply[0] !== 0 && reply[0] !== 1)) {
    throw new Error(`RateLimiterRedis: unexpected reply from the all-or-nothing script: ${String(reply).slice(0, 200)}`);
  }
  const outcomes: AllOrNothingOutcome[] = entries.map((entry, i) => {
    const consumedPoints = Number(reply[1 + 2 * i]);
    let msBeforeNext = Number(reply[2 + 2 * i]);
    if (msBeforeNext === -2) {
      const seconds = Math.floor(entry.msDuration / 1000);
      msBeforeNext = seconds > 0 ? seconds * 1000 : -1;
    }
    return { consumedPoints, msBeforeNext };
  });
  return { admitted: reply[0] === 1, outcomes };
}

/** Sends the all-or-nothing call for `entries` on `transport` (after the cross-slot check). */
export function consumeAllOrNothingOnRedis(transport: RedisTransport, entries: readonly AllOrNothingEntry[]): Promise<AllOrNothingAnswer> {
  const keys = entries.map((entry) => entry.rlKey);
  const crossSlot = crossSlotError(transport, keys);
  if (crossSlot !== undefined) return Promise.reject(crossSlot);
  return transport.run(ALL_OR_NOTHING_SCRIPT, ALL_OR_NOTHING_SCRIPT_SHA, keys, allOrNothingArguments(entries)).then((reply) => allOrNothingAnswer(entries, reply));
}
